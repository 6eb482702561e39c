"""The document set of retrieval tasks, searchable: on the server, or in the process.

:class:`DocumentIndex` is the seam: ``search(query, limit)`` and ``aclose``. Two indexes:

- :class:`ServerIndex`: the documents uploaded to an agentloom server (``POST /v1/files``), put
  in a vector store of their own and searched with ``POST /v1/vector_stores/{id}/search``; the
  store and its files are deleted when the index closes.
- :class:`LocalIndex`: for a model served by a backend with no vector store API, the same
  parsing, chunking (800-token chunks, 400 overlapping) and hybrid search the server uses, run
  in the process with the ``[embeddings]`` embedder of the configuration.

:class:`SearchDocumentsTool` is the tool a retrieval task's agent searches with; it remembers
which documents its searches returned, for the evidence recall of the task's record.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, TypeAlias

from agentloom.agents.base import AgentContext
from agentloom.agents.tools.base import Tool, ToolError
from agentloom.errors import InvalidRequestError, UpstreamError
from agentloom.frozen import frozen
from agentloom.json_types import JSONObject

if TYPE_CHECKING:
    import openai

    from agentloom.config import EmbeddingSettings
    from agentloom.retrieval.embeddings import Embedder
    from agentloom.retrieval.index import ChunkIndex

__all__ = [
    "DocumentIndex",
    "IndexKind",
    "LocalIndex",
    "Passage",
    "SearchDocumentsTool",
    "ServerIndex",
    "open_index",
]

IndexKind: TypeAlias = Literal["auto", "server", "local"]
CHUNK_TOKENS, CHUNK_OVERLAP = 800, 400  # the server's "auto" chunking
POLL_SECONDS = 0.2


@frozen
class Passage:
    """A piece of a document a search found."""

    document: str  # the document's file name
    text: str
    score: float


class DocumentIndex(Protocol):
    async def search(self, query: str, limit: int) -> list[Passage]: ...

    async def aclose(self) -> None: ...


# --- in the process --------------------------------------------------------------------------


class LocalIndex:
    """The documents chunked, embedded and indexed in memory (hybrid search)."""

    def __init__(self, index: ChunkIndex, embedder: Embedder, texts: dict[int, tuple[str, str]]):
        self._index = index
        self._embedder = embedder
        self._texts = texts  # chunk id -> (document, text)

    @classmethod
    async def build(cls, documents: Sequence[Path], settings: EmbeddingSettings) -> LocalIndex:
        from agentloom.retrieval.chunking import chunk_text
        from agentloom.retrieval.embeddings import build_embedder
        from agentloom.retrieval.index import ChunkIndex, IndexedChunk

        embedder = build_embedder(settings)
        pieces = [
            (path.name, chunk.text)
            for path, text in zip(
                documents, await asyncio.to_thread(_read_all, documents), strict=True
            )
            for chunk in chunk_text(text, max_tokens=CHUNK_TOKENS, overlap=CHUNK_OVERLAP)
        ]
        vectors = await embedder.embed([text for _, text in pieces])
        index = ChunkIndex(embedder.dimensions)
        chunks = [IndexedChunk(n, name, text, vectors[n]) for n, (name, text) in enumerate(pieces)]
        await asyncio.to_thread(index.add, chunks)
        return cls(index, embedder, dict(enumerate(pieces)))

    async def search(self, query: str, limit: int) -> list[Passage]:
        vector = (await self._embedder.embed([query]))[0]
        hits = await asyncio.to_thread(self._index.search, vector, query, limit=limit)
        return [Passage(*self._texts[hit.chunk_id], hit.score) for hit in hits]

    async def aclose(self) -> None:
        await self._embedder.aclose()


def _read_all(documents: Sequence[Path]) -> list[str]:
    from agentloom.retrieval.parsing import extract_text, sniff_content_type

    texts = []
    for path in documents:
        data = path.read_bytes()
        kind = sniff_content_type(data, path.name)
        texts.append(extract_text(data, filename=path.name, content_type=kind))
    return texts


# --- on the server ---------------------------------------------------------------------------


class ServerIndex:
    """A vector store on an agentloom server holding the documents, deleted on close."""

    def __init__(self, client: openai.AsyncOpenAI, store_id: str, file_ids: Sequence[str]):
        self._client = client
        self.store_id = store_id
        self._file_ids = tuple(file_ids)

    @classmethod
    async def build(
        cls, client: openai.AsyncOpenAI, documents: Sequence[Path], *, deadline: float
    ) -> ServerIndex:
        file_ids: list[str] = []
        index: ServerIndex | None = None
        try:
            for path in documents:
                data = await asyncio.to_thread(path.read_bytes)
                uploaded = await client.files.create(file=(path.name, data), purpose="assistants")
                file_ids.append(uploaded.id)
            store = await client.vector_stores.create(name="agentloom eval", file_ids=file_ids)
            index = cls(client, store.id, file_ids)
            await index._ingested(deadline)
        except BaseException:
            await (index._delete() if index is not None else _delete_files(client, file_ids))
            raise
        return index

    async def _ingested(self, deadline: float) -> None:
        try:
            async with asyncio.timeout(deadline):
                while True:
                    store = await self._client.vector_stores.retrieve(self.store_id)
                    counts = store.file_counts
                    if counts.failed or counts.cancelled:
                        raise UpstreamError(
                            f"the server could not ingest {counts.failed + counts.cancelled} "
                            f"of the documents into vector store {self.store_id}"
                        )
                    if counts.in_progress == 0:
                        return
                    await asyncio.sleep(POLL_SECONDS)
        except TimeoutError:
            raise UpstreamError(
                f"the documents were not ingested within {deadline:g} s (--ingest-timeout)"
            ) from None

    async def search(self, query: str, limit: int) -> list[Passage]:
        page = await self._client.vector_stores.search(
            self.store_id, query=query, max_num_results=limit
        )
        return [
            Passage(hit.filename, "\n".join(part.text for part in hit.content), hit.score)
            for hit in page.data
        ]

    async def aclose(self) -> None:
        await self._delete()

    async def _delete(self) -> None:
        try:
            await self._client.vector_stores.delete(self.store_id)
        finally:
            await _delete_files(self._client, self._file_ids)


async def _delete_files(client: openai.AsyncOpenAI, file_ids: Sequence[str]) -> None:
    for file_id in file_ids:
        await client.files.delete(file_id)


async def serves_vector_stores(client: openai.AsyncOpenAI) -> bool:
    """Whether the endpoint has the vector store API (a plain model backend answers 404)."""
    import openai

    try:
        await client.vector_stores.list(limit=1)
    except (openai.NotFoundError, openai.UnprocessableEntityError):
        return False
    except openai.APIStatusError as exc:
        if exc.status_code == 405:
            return False
        raise
    return True


# --- the tool --------------------------------------------------------------------------------


class SearchDocumentsTool(Tool):
    """Searches the document set; its output names each passage's document."""

    name = "search_documents"
    description = (
        "Search the document collection for passages relevant to a query. Search again with "
        "other words, or for the next fact, when a question needs several documents."
    )
    parameters: JSONObject = {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "What to look for."}},
        "required": ["query"],
        "additionalProperties": False,
    }

    def __init__(self, index: DocumentIndex, limit: int = 5) -> None:
        if limit < 1:
            raise InvalidRequestError("a search returns at least one passage")
        self._index = index
        self._limit = limit
        self.found: set[str] = set()  # the documents of every passage returned

    async def call(self, arguments: JSONObject, context: AgentContext) -> str:
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ToolError("give a non-empty 'query' to search for")
        passages = await self._index.search(query.strip(), self._limit)
        self.found.update(passage.document for passage in passages)
        if not passages:
            return "No passage matches."
        return "\n\n".join(
            f"[{n}] {p.document} (score {p.score:.2f})\n{p.text}" for n, p in enumerate(passages, 1)
        )


@asynccontextmanager
async def open_index(
    kind: IndexKind,
    documents: Sequence[Path],
    *,
    base_url: str,
    api_key: str | None,
    embeddings: EmbeddingSettings,
    deadline: float,
) -> AsyncIterator[DocumentIndex]:
    """The documents indexed where ``kind`` says: ``server`` (the endpoint's vector store API),
    ``local`` (in this process) or ``auto`` (the server's when it has the API)."""
    import openai

    client = openai.AsyncOpenAI(base_url=base_url, api_key=api_key or "unused", timeout=deadline)
    try:
        if kind == "server" or (kind == "auto" and await serves_vector_stores(client)):
            index: DocumentIndex = await ServerIndex.build(client, documents, deadline=deadline)
        else:
            index = await LocalIndex.build(documents, embeddings)
        try:
            yield index
        finally:
            await index.aclose()
    finally:
        await client.close()
