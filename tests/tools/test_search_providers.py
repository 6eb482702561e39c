"""The search providers against fakes of their APIs over real HTTP: what each sends, what it
makes of the answers, and how it fails."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agentloom.config import ConfigError, SearchSourceSettings, WebSearchSettings
from agentloom.errors import UpstreamError, UpstreamRateLimitError, UpstreamRequestError
from agentloom.tools.web import PROVIDERS, SearchProvider, SearchQuery, build_search_sources
from agentloom.tools.web.base import Location
from tests.tools.search_fakes import FakeSearch, running_fake

KEY = "secret-key-123"


@pytest.fixture
async def fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeSearch]:
    monkeypatch.setenv("FAKE_SEARCH_KEY", KEY)
    async with running_fake() as running:
        yield running


def _provider(fake: FakeSearch, kind: str) -> SearchProvider:
    settings = SearchSourceSettings.model_validate(
        {"provider": kind, "base_url": fake.base_url, "api_key_env": "FAKE_SEARCH_KEY"}
    )
    return PROVIDERS[kind](settings)


async def _search(provider: SearchProvider, query: SearchQuery) -> list[str]:
    try:
        return [r.url for r in await provider.search(query)]
    finally:
        await provider.aclose()


async def test_tavily_posts_json_with_key_domains_and_depth(fake: FakeSearch) -> None:
    query = SearchQuery(
        "zephyr kettle", max_results=3, allowed_domains=("example.com",), context_size="high"
    )

    urls = await _search(_provider(fake, "tavily"), query)

    assert urls == ["https://kettles.example.com/zephyr"]  # example.org filtered out
    (seen,) = fake.received
    assert (seen.method, seen.path) == ("POST", "/search")
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.body == {
        "api_key": KEY,
        "query": "zephyr kettle",
        "max_results": 3,
        "search_depth": "advanced",
        "include_domains": ["example.com"],
    }


async def test_brave_gets_with_token_count_country_and_sites(fake: FakeSearch) -> None:
    query = SearchQuery(
        "kettle",
        max_results=4,
        allowed_domains=("example.com", "example.org"),
        user_location=Location(country="gb", city="London", timezone="Europe/London"),
    )
    provider = _provider(fake, "brave")

    found = await provider.search(query)
    await provider.aclose()

    assert [r.title for r in found] == ["Zephyr X2 review", "Kettle recall 2025"]  # tags gone
    (seen,) = fake.received
    assert (seen.method, seen.path) == ("GET", "/res/v1/web/search")
    assert seen.headers["x-subscription-token"] == KEY
    assert seen.headers["x-loc-city"] == "London"
    assert seen.params == {
        "q": "kettle (site:example.com OR site:example.org)",
        "count": "4",
        "country": "GB",
    }


async def test_searxng_asks_for_json_and_keeps_max_results(fake: FakeSearch) -> None:
    provider = PROVIDERS["searxng"](
        SearchSourceSettings(provider="searxng", base_url=fake.base_url)
    )

    urls = await _search(provider, SearchQuery("kettle", max_results=1))

    assert urls == ["https://kettles.example.com/zephyr"]
    (seen,) = fake.received
    assert seen.params == {"q": "kettle", "format": "json"}
    assert "authorization" not in seen.headers


@pytest.mark.parametrize(
    ("status", "error"),
    [(429, UpstreamRateLimitError), (401, UpstreamRequestError), (503, UpstreamError)],
)
@pytest.mark.parametrize("kind", ["tavily", "brave", "searxng"])
async def test_status_failures_are_upstream_errors_without_the_key(
    fake: FakeSearch, kind: str, status: int, error: type[UpstreamError]
) -> None:
    fake.status = status

    with pytest.raises(error) as caught:
        await _search(_provider(fake, kind), SearchQuery("kettle", max_results=2))

    assert caught.value.status == status
    assert KEY not in caught.value.message


async def test_an_answer_that_is_not_json_is_an_upstream_error(fake: FakeSearch) -> None:
    fake.garbage = True

    with pytest.raises(UpstreamError, match="not JSON"):
        await _search(_provider(fake, "brave"), SearchQuery("kettle", max_results=2))


async def test_a_refused_connection_is_an_upstream_error() -> None:
    provider = PROVIDERS["searxng"](
        SearchSourceSettings(provider="searxng", base_url="http://127.0.0.1:9", timeout=2)
    )

    with pytest.raises(UpstreamError, match="could not reach"):
        await _search(provider, SearchQuery("kettle", max_results=2))


def test_a_keyed_provider_without_its_key_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MISSING_SEARCH_KEY", raising=False)
    settings = WebSearchSettings.model_validate(
        {"live": {"provider": "tavily", "api_key_env": "MISSING_SEARCH_KEY"}}
    )

    with pytest.raises(ConfigError, match="MISSING_SEARCH_KEY"):
        build_search_sources(settings)


def test_searxng_needs_a_base_url() -> None:
    with pytest.raises(ValueError, match="base_url"):
        WebSearchSettings.model_validate({"offline": {"provider": "searxng"}})
