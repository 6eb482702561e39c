"""The search providers agentloom speaks, registered in one table (:data:`PROVIDERS`).

- ``tavily``: ``POST {base}/search`` (default ``https://api.tavily.com``), key as a bearer token
  and ``api_key`` in the body; ``include_domains``; ``search_depth`` ``advanced`` for
  ``search_context_size: high``. No location.
- ``brave``: ``GET {base}/res/v1/web/search`` (default ``https://api.search.brave.com``), key in
  ``X-Subscription-Token``; ``count``, ``country`` and ``X-Loc-*`` headers for the location;
  allowed domains as ``site:`` operators.
- ``searxng``: ``GET {base}/search?format=json`` of a SearXNG instance (its JSON format must be
  enabled); allowed domains as ``site:`` operators. Usually keyless, on the local network.

Every provider's results are filtered to the allowed domains again, whatever the API did.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from agentloom.config import ConfigError, SearchSourceSettings, WebSearchSettings
from agentloom.frozen import frozen
from agentloom.redact import redact_url
from agentloom.tools.web.base import SearchProvider, SearchQuery, WebResult, domain_allowed
from agentloom.tools.web.client import JSONClient, field, text

_TAG: Final = re.compile(r"<[^>]{0,200}>")


def _results(query: SearchQuery, found: list[WebResult]) -> list[WebResult]:
    kept = [r for r in found if r.url and domain_allowed(r.url, query.allowed_domains)]
    return kept[: query.max_results]


def _with_sites(query: SearchQuery) -> str:
    if not query.allowed_domains:
        return query.query
    sites = " OR ".join(f"site:{domain}" for domain in query.allowed_domains)
    return (
        f"{query.query} ({sites})" if len(query.allowed_domains) > 1 else f"{query.query} {sites}"
    )


class Tavily:
    name = "tavily"

    def __init__(self, settings: SearchSourceSettings, key: str) -> None:
        self._key = key
        self._client = JSONClient(
            "the Tavily search API",
            settings.base_url or "https://api.tavily.com",
            timeout=settings.timeout,
            headers={"authorization": f"Bearer {key}"},
        )

    async def search(self, query: SearchQuery) -> list[WebResult]:
        body: dict[str, object] = {
            "api_key": self._key,
            "query": query.query,
            "max_results": query.max_results,
            "search_depth": "advanced" if query.context_size == "high" else "basic",
        }
        if query.allowed_domains:
            body["include_domains"] = list(query.allowed_domains)
        answer = await self._client.post("search", body)
        rows = field(answer, "results")
        found = [
            WebResult(text(field(r, "url")), text(field(r, "title")), text(field(r, "content")))
            for r in (rows if isinstance(rows, list) else [])
        ]
        return _results(query, found)

    async def aclose(self) -> None:
        await self._client.aclose()


class Brave:
    name = "brave"

    def __init__(self, settings: SearchSourceSettings, key: str) -> None:
        self._client = JSONClient(
            "the Brave search API",
            settings.base_url or "https://api.search.brave.com",
            timeout=settings.timeout,
            headers={"x-subscription-token": key, "accept": "application/json"},
        )

    async def search(self, query: SearchQuery) -> list[WebResult]:
        params: dict[str, str | int] = {"q": _with_sites(query), "count": query.max_results}
        headers: dict[str, str] = {}
        where = query.user_location
        if where is not None:
            if where.country:
                params["country"] = where.country.upper()
                headers["x-loc-country"] = where.country.upper()
            for header, value in (("x-loc-city", where.city), ("x-loc-timezone", where.timezone)):
                if value:
                    headers[header] = value
        answer = await self._client.get("res/v1/web/search", params, headers)
        rows = field(field(answer, "web"), "results")
        found = [
            WebResult(
                text(field(r, "url")), _plain(field(r, "title")), _plain(field(r, "description"))
            )
            for r in (rows if isinstance(rows, list) else [])
        ]
        return _results(query, found)

    async def aclose(self) -> None:
        await self._client.aclose()


class SearXNG:
    name = "searxng"

    def __init__(self, settings: SearchSourceSettings, key: str | None) -> None:
        assert settings.base_url is not None  # the settings require it
        self._client = JSONClient(
            f"the SearXNG instance at {redact_url(settings.base_url)}",
            settings.base_url,
            timeout=settings.timeout,
            headers={"authorization": f"Bearer {key}"} if key else {},
        )

    async def search(self, query: SearchQuery) -> list[WebResult]:
        params: dict[str, str | int] = {"q": _with_sites(query), "format": "json"}
        answer = await self._client.get("search", params)
        rows = field(answer, "results")
        found = [
            WebResult(text(field(r, "url")), _plain(field(r, "title")), _plain(field(r, "content")))
            for r in (rows if isinstance(rows, list) else [])
        ]
        return _results(query, found)

    async def aclose(self) -> None:
        await self._client.aclose()


def _plain(value: object) -> str:
    """Text without the HTML highlighting some APIs put in titles and snippets."""
    return _TAG.sub("", text(value)).strip()


def _keyed(
    make: Callable[[SearchSourceSettings, str], SearchProvider],
) -> Callable[[SearchSourceSettings], SearchProvider]:
    def build(settings: SearchSourceSettings) -> SearchProvider:
        key = settings.resolved_api_key()
        if not key:
            where = settings.api_key_env or "(none configured: set api_key_env)"
            raise ConfigError(
                f"web search provider '{settings.provider}' needs an API key in the "
                f"environment variable {where}"
            )
        return make(settings, key)

    return build


PROVIDERS: dict[str, Callable[[SearchSourceSettings], SearchProvider]] = {
    "tavily": _keyed(Tavily),
    "brave": _keyed(Brave),
    "searxng": lambda settings: SearXNG(settings, settings.resolved_api_key()),
}


@frozen
class WebSearchSources:
    """Where web searches go: ``live`` for ordinary calls, ``offline`` for calls with
    ``external_web_access: false`` (``None``: unavailable)."""

    live: SearchProvider | None = None
    offline: SearchProvider | None = None
    max_results: int = 5

    async def aclose(self) -> None:
        for provider in (self.live, self.offline):
            if provider is not None:
                await provider.aclose()


def build_search_sources(settings: WebSearchSettings) -> WebSearchSources:
    def build(source: SearchSourceSettings | None) -> SearchProvider | None:
        return None if source is None else PROVIDERS[source.provider](source)

    return WebSearchSources(
        live=build(settings.live), offline=build(settings.offline), max_results=settings.max_results
    )
