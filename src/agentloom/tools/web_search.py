"""``web_search``: the model asks a question of the web, the server asks a search provider.

The model is offered one function, ``web_search(query)`` (``queries`` is accepted too). The
server sends each query to the configured provider (:mod:`agentloom.tools.web`), streams the
call's events, and tells the model the results numbered ``[1] title (url)`` so its answer can
cite them; :mod:`agentloom.engine.citations` turns those into ``url_citation`` annotations.

``external_web_access: false`` never reaches the live provider: the call goes to the configured
offline source, or, without one, fails and the model is told web search is unavailable. So does
every call when no provider is configured at all: the tool is accepted (Codex sends it with every
request) unless it names a ``search_engine`` other than the provider its calls would use, which is
a 400 naming the field. ``max_results`` (Llama Stack's) is the count asked of the provider and
the most results a call returns, whatever ``search_context_size`` says.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Final

from agentloom.api import events as ev
from agentloom.api.items import WebSearchAction, WebSearchCall, WebSearchSource
from agentloom.api.tools import WEB_SEARCH_MAX_RESULTS, UserLocation, WebSearchTool
from agentloom.errors import InvalidRequestError, UpstreamError
from agentloom.frozen import frozen
from agentloom.inference import base as inf
from agentloom.json_types import JSONObject
from agentloom.text import clip
from agentloom.tools.base import Source, ToolCallContext, ToolResult, ToolStep
from agentloom.tools.items import Replayed, ToolItem
from agentloom.tools.web import SearchProvider, SearchQuery, WebResult, WebSearchSources
from agentloom.tools.web.base import Location

NAME: Final = "web_search"
MAX_QUERIES: Final = 4
MAX_RESULTS: Final = WEB_SEARCH_MAX_RESULTS
# search_context_size -> (results, relative to the configured count; snippet characters)
CONTEXT_SIZES: Final = {"low": (0.5, 300), "medium": (1.0, 600), "high": (2.0, 1200)}

PARAMETERS: JSONObject = {  # also the agent SDK's web_search tool's
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "What to search the web for: keywords or a short question.",
        }
    },
    "required": ["query"],
    "additionalProperties": False,
}


@frozen
class WebSearch:
    """One ``web_search`` tool of a request."""

    config: WebSearchTool
    sources: WebSearchSources
    include_sources: bool  # include: ["web_search_call.action.sources"]
    param: str = "tools[0]"

    @property
    def kind(self) -> str:
        return self.config.type

    @property
    def item_prefix(self) -> str:
        return WebSearchCall.ID_PREFIX

    @property
    def spec(self) -> inf.FunctionSpec:
        return inf.FunctionSpec(
            name=NAME,
            description=(
                "Search the web for current information. Use it for questions about recent "
                "events or facts you are unsure of; cite results as [number]."
            ),
            parameters=PARAMETERS,
        )

    async def check(self) -> None:
        """Accepted without a provider (an unavailable search is told to the model per call),
        but not when ``search_engine`` names one its calls would not use."""
        engine = self.config.search_engine
        provider = self._provider()
        if engine is None or (provider is not None and provider.name == engine.lower()):
            return
        param = f"{self.param}.search_engine"
        raise InvalidRequestError(self._engine_refused(engine, provider), param=param)

    def _engine_refused(self, engine: str, provider: SearchProvider | None) -> str:
        calls = "calls with external_web_access: false" if self.offline else "live web searches"
        if provider is None:
            return (
                f"search_engine '{engine}' cannot be used: this server has no web search "
                f"provider for {calls}."
            )
        return (
            f"search_engine '{engine}' cannot be used: this server's web search provider for "
            f"{calls} is '{provider.name}'; send search_engine '{provider.name}' or leave it out."
        )

    def item(self, context: ToolCallContext, arguments: str) -> WebSearchCall:
        queries, _ = parse_queries(arguments)
        return WebSearchCall(id=context.item_id, status="in_progress", action=_action(queries))

    async def run(self, context: ToolCallContext, arguments: str) -> AsyncIterator[ToolStep]:
        where = {"item_id": context.item_id, "output_index": context.output_index}
        yield ev.WebSearchCallInProgress(sequence_number=context.seq(), **where)
        queries, problem = parse_queries(arguments)
        provider = self._provider()
        if problem is None and provider is None:
            problem = self._unavailable()
        if problem is not None or provider is None:
            yield self._failed(context, queries, problem or "")
            return
        yield ev.WebSearchCallSearching(sequence_number=context.seq(), **where)
        try:
            results = await self._search(provider, queries)
        except UpstreamError as exc:
            yield self._failed(context, queries, exc.message)
            return
        yield ev.WebSearchCallCompleted(sequence_number=context.seq(), **where)
        yield self._completed(context, queries, results)

    @property
    def offline(self) -> bool:
        return self.config.external_web_access is False

    def _provider(self) -> SearchProvider | None:
        return self.sources.offline if self.offline else self.sources.live

    def _unavailable(self) -> str:
        if self.offline:
            return (
                "web search is unavailable: live web access is off for this request and the "
                "server has no offline search source. Answer from what you know, and say so."
            )
        return (
            "web search is unavailable: this server has no search provider configured. "
            "Answer from what you know, and say so."
        )

    async def _search(self, provider: SearchProvider, queries: list[str]) -> list[WebResult]:
        found: dict[str, WebResult] = {}
        for query in queries:
            for result in await provider.search(self._query(query)):
                found.setdefault(result.url, result)
        kept = list(found.values())
        return kept if self.config.max_results is None else kept[: self.config.max_results]

    def _count(self) -> int:
        """Results asked of the provider per query: the request's ``max_results``, else the
        configured count scaled by ``search_context_size``."""
        if self.config.max_results is not None:
            return self.config.max_results
        factor, _ = CONTEXT_SIZES[self.config.search_context_size or "medium"]
        return max(1, min(MAX_RESULTS, round(self.sources.max_results * factor)))

    def _query(self, text: str) -> SearchQuery:
        size = self.config.search_context_size or "medium"
        domains = self.config.filters.allowed_domains if self.config.filters else None
        return SearchQuery(
            query=text,
            max_results=self._count(),
            allowed_domains=tuple(_domain(d) for d in domains or ()),
            user_location=_location(self.config.user_location),
            context_size=size,
        )

    def _completed(
        self, context: ToolCallContext, queries: list[str], results: Sequence[WebResult]
    ) -> ToolResult:
        _, snippet = CONTEXT_SIZES[self.config.search_context_size or "medium"]
        sources = tuple(
            Source.web(
                context.first_source + i,
                r.url,
                r.title or r.url,
                clip(r.snippet, snippet, squash=True),
            )
            for i, r in enumerate(results)
        )
        shown = [WebSearchSource(url=r.url) for r in results] if self.include_sources else None
        item = WebSearchCall(id=context.item_id, status="completed", action=_action(queries, shown))
        return ToolResult(item=item, output=tell_model(queries, sources), sources=sources)

    def _failed(self, context: ToolCallContext, queries: list[str], why: str) -> ToolResult:
        item = WebSearchCall(id=context.item_id, status="failed", action=_action(queries))
        return ToolResult(item=item, output=f"Error: the web search failed: {why}")


def parse_queries(arguments: str) -> tuple[list[str], str | None]:
    """The queries of a call's arguments (``query``, ``queries``, or a bare string), and what
    is wrong with them (``None``: nothing)."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        return [], 'the arguments are not valid JSON; send {"query": "..."}'
    if isinstance(value, dict):
        value = value.get("queries", value.get("query"))
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return [], "'query' must be a string"
    queries = [q.strip() for q in value if isinstance(q, str) and q.strip()][:MAX_QUERIES]
    if not queries:
        return [], "give a non-empty 'query'"
    return queries, None


def tell_model(queries: Sequence[str], sources: Sequence[Source]) -> str:
    """The tool message: the results, numbered for citation."""
    asked = " | ".join(queries)
    if not sources:
        return f"No web results for: {asked}"
    blocks = [f"[{s.number}] {s.title} ({s.url})\n{s.text}" for s in sources]
    return (
        f"Web results for: {asked}\n\n"
        + "\n\n".join(blocks)
        + "\n\nAnswer from these results and cite each one you use by its number in square "
        "brackets, e.g. [1]."
    )


def _action(queries: list[str], sources: list[WebSearchSource] | None = None) -> WebSearchAction:
    return WebSearchAction(
        query=queries[0] if queries else None,
        queries=queries if len(queries) > 1 else None,
        sources=sources,
    )


def _location(where: UserLocation | None) -> Location | None:
    if where is None:
        return None
    return Location(
        country=where.country, region=where.region, city=where.city, timezone=where.timezone
    )


def _domain(value: str) -> str:
    """``https://www.Example.com/path`` -> ``www.example.com``: a bare host name."""
    host = value.strip().lower().split("://", 1)[-1]
    return host.split("/", 1)[0].rstrip(".")


# --- the item ----------------------------------------------------------------------------------


def _replayed(item: WebSearchCall) -> Replayed:
    """A web search the server (or the client's provider) ran: the call, and the pages it
    found when they were kept (``include: ["web_search_call.action.sources"]``)."""
    call_id = item.id or "ws"
    action = item.action
    arguments = json.dumps({"query": action.query if isinstance(action, WebSearchAction) else ""})
    return Replayed(inf.ToolCall(id=call_id, name=NAME, arguments=arguments), _found(item))


def _found(item: WebSearchCall) -> str:
    if item.status not in (None, "completed"):
        return "Error: this web search did not complete."
    action = item.action
    if not isinstance(action, WebSearchAction):
        return f"({action.type} {action.url or ''})".replace(" )", ")")
    if action.sources is None:
        return "(The results of this search are not kept; search again if they are needed.)"
    return "Pages found:\n" + "\n".join(s.url for s in action.sources)


def _line(item: WebSearchCall) -> str:
    return f"WEB SEARCH {item.action.model_dump_json(exclude_none=True)}: {item.status}"


def _redacted(item: WebSearchCall, notice: str) -> WebSearchCall:
    if not isinstance(item.action, WebSearchAction):
        return item
    return item.model_copy(update={"action": item.action.model_copy(update={"sources": None})})


ITEM = ToolItem(WebSearchCall, replayed=_replayed, line=_line, redacted=_redacted)
