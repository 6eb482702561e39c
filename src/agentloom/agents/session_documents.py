"""Documents given to a turn, Llama Stack's ``documents=[{"content", "mime_type"}]``.

Each document is uploaded (``POST /v1/files``) and attached to the session's vector store,
which is created on first use, named after the session, its id kept in the session
conversation's metadata (``vector_store_id``) so every agent on the session finds it. The turn
waits for ingestion, at most ``timeout`` seconds, then searches it with ``file_search``.

``content`` is the text itself, a ``data:`` URL (base64 or percent-encoded), an ``http(s)://``
URL, or ``{"uri": ...}``: URLs are fetched here, by the client, each under the same deadline.
"""

from __future__ import annotations

import asyncio
import base64
import mimetypes
import urllib.parse
from collections.abc import Sequence
from typing import NotRequired, TypedDict

import httpx2
import openai

from agentloom.frozen import frozen

__all__ = ["URL", "AttachedDocuments", "Document", "DocumentError", "SessionDocuments"]

DEFAULT_MIME = "text/plain"
MAX_DOCUMENT_BYTES = 32 * 1024 * 1024
STORE_KEY = "vector_store_id"  # where a session's vector store id is kept, in its metadata


class URL(TypedDict):
    uri: str


class Document(TypedDict):
    content: str | URL
    mime_type: NotRequired[str]


class DocumentError(ValueError):
    """A document that cannot be read, fetched or ingested; the message names it."""


@frozen
class AttachedDocuments:
    """A turn's documents, in the session's vector store (``file_ids`` and ``filenames`` in
    the given order)."""

    vector_store_id: str
    file_ids: tuple[str, ...]
    filenames: tuple[str, ...]


@frozen
class _Upload:
    filename: str
    data: bytes
    mime_type: str


class SessionDocuments:
    """The sessions' vector stores, as one agent sees them (looked up once a session)."""

    def __init__(self, client: openai.AsyncOpenAI, timeout: float) -> None:
        if timeout <= 0:
            raise ValueError("document_timeout must be positive")
        self._client = client
        self.timeout = timeout
        self._stores: dict[str, str | None] = {}

    async def store(self, session_id: str) -> str | None:
        """The session's vector store id, ``None`` until a turn gave it documents."""
        if session_id not in self._stores:
            conversation = await self._client.conversations.retrieve(session_id)
            metadata = conversation.metadata if isinstance(conversation.metadata, dict) else {}
            found = metadata.get(STORE_KEY)
            self._stores[session_id] = found if isinstance(found, str) else None
        return self._stores[session_id]

    async def attach(self, session_id: str, documents: Sequence[Document]) -> AttachedDocuments:
        """Upload ``documents`` into the session's vector store and wait for their ingestion."""
        try:
            async with asyncio.timeout(self.timeout):
                uploads = [await _read(i, doc) for i, doc in enumerate(documents)]
                store = await self._store_for(session_id)
                file_ids = [await self._upload(upload) for upload in uploads]
                await self._ingest(store, file_ids)
        except TimeoutError:
            raise DocumentError(
                f"the turn's documents were not fetched and ingested within {self.timeout:g} s"
            ) from None
        return AttachedDocuments(store, tuple(file_ids), tuple(u.filename for u in uploads))

    def forget(self, session_id: str) -> None:
        self._stores.pop(session_id, None)

    async def _store_for(self, session_id: str) -> str:
        existing = await self.store(session_id)
        if existing is not None:
            return existing
        conversation = await self._client.conversations.retrieve(session_id)
        metadata = dict(conversation.metadata) if isinstance(conversation.metadata, dict) else {}
        name = metadata.get("name")
        store = await self._client.vector_stores.create(
            name=name if isinstance(name, str) and name else session_id,
            metadata={"session_id": session_id},
        )
        metadata[STORE_KEY] = store.id
        await self._client.conversations.update(session_id, metadata=metadata)
        self._stores[session_id] = store.id
        return store.id

    async def _upload(self, upload: _Upload) -> str:
        content = (upload.filename, upload.data, upload.mime_type)
        created = await self._client.files.create(file=content, purpose="assistants")
        return created.id

    async def _ingest(self, store: str, file_ids: list[str]) -> None:
        batch = await self._client.vector_stores.file_batches.create_and_poll(
            file_ids=file_ids, vector_store_id=store, poll_interval_ms=50
        )
        if batch.file_counts.failed or batch.file_counts.cancelled or batch.status != "completed":
            raise DocumentError(await self._failures(store, batch.id))

    async def _failures(self, store: str, batch_id: str) -> str:
        failed = self._client.vector_stores.file_batches.list_files(
            batch_id, vector_store_id=store, filter="failed"
        )
        reasons = [
            f"{file.id}: {file.last_error.message if file.last_error else 'failed'}"
            async for file in failed
        ]
        return "a document could not be ingested: " + ("; ".join(reasons) or "batch not completed")


# --- a document's bytes ----------------------------------------------------------------------


async def _read(index: int, document: Document) -> _Upload:
    content = document.get("content")
    mime = document.get("mime_type") or DEFAULT_MIME
    if isinstance(content, dict):
        return await _fetch(index, content["uri"], mime)
    if not isinstance(content, str):
        raise DocumentError(f"documents[{index}].content must be text, a URL or {{'uri': ...}}")
    if content.startswith("data:"):
        return _data_url(index, content, document.get("mime_type"))
    if content.startswith(("http://", "https://")):
        return await _fetch(index, content, mime)
    return _Upload(_filename(index, "", mime), content.encode(), mime)


def _data_url(index: int, url: str, given: str | None) -> _Upload:
    header, comma, payload = url[len("data:") :].partition(",")
    if not comma:
        raise DocumentError(f"documents[{index}].content: a data URL needs a ',' before its data")
    params = header.split(";")
    mime = given or params[0] or DEFAULT_MIME
    try:
        data = (
            base64.b64decode(payload, validate=True)
            if "base64" in params[1:]
            else urllib.parse.unquote_to_bytes(payload)
        )
    except ValueError as error:
        raise DocumentError(f"documents[{index}].content: bad base64 ({error})") from None
    return _Upload(_filename(index, "", mime), data, mime)


async def _fetch(index: int, url: str, mime: str) -> _Upload:
    async with httpx2.AsyncClient(follow_redirects=True) as http:
        try:
            data = await _download(http, url)
        except httpx2.HTTPError as error:
            raise DocumentError(f"documents[{index}]: fetching {url} failed ({error})") from None
        except DocumentError as error:
            raise DocumentError(f"documents[{index}]: {error}") from None
    path = urllib.parse.urlsplit(url).path
    return _Upload(_filename(index, path.rsplit("/", 1)[-1], mime), data, mime)


async def _download(http: httpx2.AsyncClient, url: str) -> bytes:
    async with http.stream("GET", url) as reply:
        if reply.status_code >= 400:
            raise DocumentError(f"fetching {url} answered HTTP {reply.status_code}")
        chunks: list[bytes] = []
        size = 0
        async for chunk in reply.aiter_bytes():
            size += len(chunk)
            if size > MAX_DOCUMENT_BYTES:
                raise DocumentError(f"{url} is larger than {MAX_DOCUMENT_BYTES} bytes")
            chunks.append(chunk)
        return b"".join(chunks)


def _filename(index: int, name: str, mime: str) -> str:
    if name:
        return name
    return f"document-{index + 1}{mimetypes.guess_extension(mime) or '.txt'}"
