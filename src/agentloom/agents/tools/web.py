"""``web_search`` for agents: the server's search providers (:mod:`agentloom.tools.web`), in
process.

The tool asks the configured live source (``[web_search.live]``) and tells the model the results
numbered ``[n] title (url)`` with their snippets, so its answer can cite them. Without a
configured source the tool is still built and offered (as the server always accepts it), and
each call fails with an error the model sees: ``web_search is not configured: ...``. A provider
that needs an API key its environment variable does not hold fails when the tool is built
(:class:`agentloom.config.ConfigError`), as the server fails at start.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from agentloom.agents.base import AgentContext
from agentloom.agents.tools.base import Tool, ToolError
from agentloom.config import WebSearchSettings
from agentloom.errors import UpstreamError
from agentloom.json_types import JSONObject
from agentloom.text import clip
from agentloom.tools.web import SearchQuery, WebResult, WebSearchSources, build_search_sources
from agentloom.tools.web_search import PARAMETERS

__all__ = ["NOT_CONFIGURED", "WebSearchTool", "format_results", "web_search_tool"]

NOT_CONFIGURED: Final = (
    "web_search is not configured: set [web_search.live] in the agentloom configuration "
    '(e.g. provider = "searxng" and base_url = "http://127.0.0.1:8888"). Answer from what you '
    "know, and say so."
)
SNIPPET_CHARS: Final = 600


class WebSearchTool(Tool):
    """Searches the web through ``sources.live`` and returns numbered results."""

    name = "web_search"
    description = (
        "Search the web for current information. Use it for recent events or facts you are "
        "unsure of; cite results as [number]."
    )
    parameters: JSONObject = PARAMETERS

    def __init__(self, sources: WebSearchSources, *, snippet_chars: int = SNIPPET_CHARS) -> None:
        self.sources = sources
        self.snippet_chars = snippet_chars

    @property
    def configured(self) -> bool:
        return self.sources.live is not None

    async def call(self, arguments: JSONObject, context: AgentContext) -> str:
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ToolError("give a non-empty 'query' string")
        provider = self.sources.live
        if provider is None:
            raise ToolError(NOT_CONFIGURED)
        asked = SearchQuery(query=query.strip(), max_results=self.sources.max_results)
        try:
            results = await provider.search(asked)
        except UpstreamError as exc:
            raise ToolError(f"the web search failed: {exc.message}") from None
        return format_results(asked.query, results, self.snippet_chars)

    async def aclose(self) -> None:
        await self.sources.aclose()


def web_search_tool(settings: WebSearchSettings) -> WebSearchTool:
    """The tool the ``[web_search]`` settings describe (built even when none is configured)."""
    return WebSearchTool(build_search_sources(settings))


def _snippet(result: WebResult, chars: int) -> str:
    return clip(result.snippet, chars, squash=True)


def format_results(query: str, results: Sequence[WebResult], snippet_chars: int) -> str:
    """What the model is told: the results numbered from 1, each with its URL and snippet."""
    if not results:
        return f"No web results for: {query}"
    blocks = [
        f"[{n}] {r.title or r.url} ({r.url})\n{_snippet(r, snippet_chars)}".rstrip()
        for n, r in enumerate(results, start=1)
    ]
    return f"Web results for: {query}\n\n" + "\n\n".join(blocks)
