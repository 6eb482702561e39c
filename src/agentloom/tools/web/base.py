"""The search-provider seam: a query in, ranked web results out."""

from __future__ import annotations

from typing import Literal, Protocol
from urllib.parse import urlsplit

from agentloom.frozen import frozen

ContextSize = Literal["low", "medium", "high"]


@frozen
class WebResult:
    url: str
    title: str
    snippet: str


@frozen
class Location:
    """The user's approximate location (``user_location``); every part optional."""

    country: str | None = None  # ISO 3166-1 alpha-2
    region: str | None = None
    city: str | None = None
    timezone: str | None = None


@frozen
class SearchQuery:
    """One search, with what the request says around it."""

    query: str
    max_results: int
    allowed_domains: tuple[str, ...] = ()  # subdomains allowed too
    user_location: Location | None = None
    context_size: ContextSize = "medium"


class SearchProvider(Protocol):
    """A web search API. Failures leave as :class:`agentloom.errors.UpstreamError`."""

    @property
    def name(self) -> str: ...

    async def search(self, query: SearchQuery) -> list[WebResult]: ...

    async def aclose(self) -> None: ...


def domain_allowed(url: str, allowed: tuple[str, ...]) -> bool:
    """Whether ``url``'s host is one of ``allowed`` or a subdomain of one (all: when empty)."""
    if not allowed:
        return True
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    return any(host == d or host.endswith("." + d) for d in allowed)
