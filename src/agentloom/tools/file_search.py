"""``file_search``: the model asks for passages, the server searches the vector stores.

The model is offered one function, ``file_search(queries)``. The server searches every listed
vector store (in parallel, see the searcher), streams the call's events, and tells the model the
passages, numbered, so its answer can cite them as ``[1]``; :mod:`agentloom.engine.citations`
turns those numbers — or, for models that leave them out, the passages the answer draws on —
into ``file_citation`` annotations.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Protocol

from agentloom.api import events as ev
from agentloom.api.filters import Filter
from agentloom.api.items import FileSearchCall, FileSearchResult
from agentloom.api.tools import FileSearchTool
from agentloom.errors import AgentloomError
from agentloom.frozen import frozen
from agentloom.inference import base as inf
from agentloom.json_types import JSONObject
from agentloom.retrieval.index import SearchMode, Weights
from agentloom.tools.base import Source, ToolCallContext, ToolResult, ToolStep
from agentloom.tools.items import Replayed, ToolItem

NAME = "file_search"
DEFAULT_RESULTS = 10
MAX_QUERIES = 8

_PARAMETERS: JSONObject = {
    "type": "object",
    "properties": {
        "queries": {
            "type": "array",
            "items": {"type": "string"},
            "description": (
                "One to five search queries: the user's question, and rephrasings or keywords "
                "(names, codes) that may appear in the answer."
            ),
        }
    },
    "required": ["queries"],
    "additionalProperties": False,
}


class Passage(Protocol):
    """A passage a search found."""

    @property
    def file_id(self) -> str: ...
    @property
    def filename(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def text(self) -> str: ...
    @property
    def attributes(self) -> Mapping[str, str | float | bool]: ...


class Searcher(Protocol):
    """Searches vector stores (the vector stores service)."""

    async def require(self, vector_store_ids: Sequence[str], *, param: str) -> None:
        """Raise NotFoundError naming ``param`` unless every store exists."""
        ...

    async def search(
        self,
        vector_store_ids: Sequence[str],
        queries: Sequence[str],
        *,
        limit: int,
        filters: Filter | None = None,
        score_threshold: float = 0.0,
        mode: SearchMode = "hybrid",
        weights: Weights = Weights(),  # noqa: B008 - frozen, a shared default is safe
    ) -> Sequence[Passage]: ...


@frozen
class FileSearch:
    """One ``file_search`` tool of a request."""

    config: FileSearchTool
    searcher: Searcher
    include_results: bool  # include: ["file_search_call.results"]
    param: str = "tools[0]"  # where the tool sits in the request

    @property
    def kind(self) -> str:
        return "file_search"

    @property
    def item_prefix(self) -> str:
        return FileSearchCall.ID_PREFIX

    @property
    def spec(self) -> inf.FunctionSpec:
        return inf.FunctionSpec(
            name=NAME,
            description=(
                "Search the user's uploaded files for passages relevant to a question. Use it "
                "before answering questions the files may cover; cite passages as [number]."
            ),
            parameters=_PARAMETERS,
        )

    async def check(self) -> None:
        await self.searcher.require(
            self.config.vector_store_ids, param=f"{self.param}.vector_store_ids"
        )

    def item(self, context: ToolCallContext, arguments: str) -> FileSearchCall:
        queries, _ = parse_queries(arguments)
        return FileSearchCall(id=context.item_id, queries=queries, status="in_progress")

    async def run(self, context: ToolCallContext, arguments: str) -> AsyncIterator[ToolStep]:
        where = {"item_id": context.item_id, "output_index": context.output_index}
        yield ev.FileSearchCallInProgress(sequence_number=context.seq(), **where)
        queries, problem = parse_queries(arguments)
        if problem is not None:
            yield self._failed(context, queries, problem)
            return
        yield ev.FileSearchCallSearching(sequence_number=context.seq(), **where)
        try:
            passages = await self._search(queries)
        except AgentloomError as exc:
            yield self._failed(context, queries, exc.message)
            return
        yield ev.FileSearchCallCompleted(sequence_number=context.seq(), **where)
        yield self._completed(context, queries, passages)

    async def _search(self, queries: list[str]) -> Sequence[Passage]:
        config, ranking = self.config, self.config.ranking_options
        weights = Weights()
        if ranking is not None and ranking.hybrid_search is not None:
            hybrid = ranking.hybrid_search
            weights = Weights(embedding=hybrid.embedding_weight, text=hybrid.text_weight)
        return await self.searcher.search(
            config.vector_store_ids,
            queries,
            limit=config.max_num_results or DEFAULT_RESULTS,
            filters=config.filters,
            score_threshold=(ranking.score_threshold or 0.0) if ranking is not None else 0.0,
            mode=config.search_mode or "hybrid",
            weights=weights,
        )

    def _completed(
        self, context: ToolCallContext, queries: list[str], passages: Sequence[Passage]
    ) -> ToolResult:
        sources = tuple(
            Source(context.first_source + i, p.file_id, p.filename, p.text)
            for i, p in enumerate(passages)
        )
        results = [_result(p) for p in passages] if self.include_results else None
        item = FileSearchCall(
            id=context.item_id, queries=queries, status="completed", results=results
        )
        return ToolResult(item=item, output=tell_model(queries, sources), sources=sources)

    def _failed(self, context: ToolCallContext, queries: list[str], why: str) -> ToolResult:
        item = FileSearchCall(id=context.item_id, queries=queries, status="failed")
        return ToolResult(item=item, output=f"Error: the file search failed: {why}")


def parse_queries(arguments: str) -> tuple[list[str], str | None]:
    """The queries of a call's arguments, and what is wrong with them (``None``: nothing).

    A bare string or ``{"query": ...}`` is accepted too: small models produce both."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        return [], 'the arguments are not valid JSON; send {"queries": ["..."]}'
    if isinstance(value, dict):
        value = value.get("queries", value.get("query"))
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return [], "'queries' must be a list of strings"
    queries = [q.strip() for q in value if isinstance(q, str) and q.strip()][:MAX_QUERIES]
    if not queries:
        return [], "give at least one non-empty query in 'queries'"
    return queries, None


def tell_model(queries: Sequence[str], sources: Sequence[Source]) -> str:
    """The tool message: the passages found, numbered for citation."""
    asked = " | ".join(queries)
    if not sources:
        return f"No passages in the files matched: {asked}"
    blocks = [f"[{s.number}] {s.filename}\n{s.text.strip()}" for s in sources]
    return (
        f"Passages found for: {asked}\n\n"
        + "\n\n".join(blocks)
        + "\n\nAnswer from these passages and cite each one you use by its number in square "
        "brackets, e.g. [1]."
    )


def _result(passage: Passage) -> FileSearchResult:
    return FileSearchResult(
        file_id=passage.file_id,
        filename=passage.filename,
        score=round(passage.score, 6),
        text=passage.text,
        attributes=dict(passage.attributes),
    )


# --- the item ----------------------------------------------------------------------------------


def _replayed(item: FileSearchCall) -> Replayed:
    """The search, and what it found (when the results were kept) as the tool's answer."""
    arguments = json.dumps({"queries": item.queries})
    return Replayed(inf.ToolCall(id=item.id, name=NAME, arguments=arguments), _found(item))


def _found(item: FileSearchCall) -> str:
    if item.status != "completed":
        return "Error: this file search did not complete."
    if item.results is None:
        return "(The passages this search found are not kept; search again if they are needed.)"
    if not item.results:
        return "No passages in the files matched."
    return "\n\n".join(f"{r.filename or r.file_id}:\n{r.text or ''}" for r in item.results)


def _line(item: FileSearchCall) -> str:
    found = "; ".join(f"{r.filename}: {r.text}" for r in item.results or [])
    return f"FILE SEARCH {item.queries}: {found or item.status}"


def _redacted(item: FileSearchCall, notice: str) -> FileSearchCall:
    return item.model_copy(update={"results": None})


ITEM = ToolItem(FileSearchCall, replayed=_replayed, line=_line, redacted=_redacted)
