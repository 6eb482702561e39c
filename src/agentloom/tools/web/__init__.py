"""Web search providers behind one seam (:class:`SearchProvider`), for the ``web_search`` tool."""

from agentloom.tools.web.base import SearchProvider, SearchQuery, WebResult
from agentloom.tools.web.providers import PROVIDERS, WebSearchSources, build_search_sources

__all__ = [
    "PROVIDERS",
    "SearchProvider",
    "SearchQuery",
    "WebResult",
    "WebSearchSources",
    "build_search_sources",
]
