"""The agents' web_search tool against fake search providers over real HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agentloom.agents.base import AgentContext
from agentloom.agents.builders import ToolEnvironment, build_tools
from agentloom.agents.tools.base import ToolError
from agentloom.agents.tools.web import NOT_CONFIGURED, WebSearchTool, web_search_tool
from agentloom.config import ConfigError, SearchSourceSettings, Settings, WebSearchSettings
from tests.tools.search_fakes import PAGES, FakeSearch, running_fake


@pytest.fixture
async def fake() -> AsyncIterator[FakeSearch]:
    async with running_fake() as served:
        yield served


@pytest.fixture
async def tool(fake: FakeSearch) -> AsyncIterator[WebSearchTool]:
    source = SearchSourceSettings(provider="searxng", base_url=fake.base_url, timeout=2)
    built = web_search_tool(WebSearchSettings(live=source, max_results=3))
    yield built
    await built.aclose()


async def test_results_are_numbered_with_title_url_and_snippet(
    tool: WebSearchTool, fake: FakeSearch
) -> None:
    told = await tool.call({"query": "zephyr kettle"}, AgentContext())

    assert fake.received[0].params == {"q": "zephyr kettle", "format": "json"}
    assert told.startswith("Web results for: zephyr kettle")
    assert f"[1] {PAGES[0].title} ({PAGES[0].url})\n{PAGES[0].snippet}" in told
    assert f"[2] Kettle recall 2025 ({PAGES[1].url})" in told  # the HTML highlighting is gone
    assert tool.spec().name == "web_search"
    assert tool.spec().parameters["required"] == ["query"]


async def test_a_keyed_provider_gets_its_key_from_the_environment(
    fake: FakeSearch, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_BRAVE_KEY", "k-123")
    source = SearchSourceSettings(
        provider="brave", base_url=fake.base_url, api_key_env="AGENT_BRAVE_KEY", timeout=2
    )
    settings = Settings(web_search=WebSearchSettings(live=source, max_results=2))
    (tool,) = build_tools(["web_search"], ToolEnvironment(settings=settings))
    try:
        told = await tool.call({"query": "kettle"}, AgentContext())
    finally:
        await tool.aclose()

    assert fake.received[0].headers["x-subscription-token"] == "k-123"
    assert fake.received[0].params["count"] == "2"
    assert "[1] Zephyr X2 review" in told


def test_a_missing_key_fails_when_the_tool_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENT_BRAVE_KEY", raising=False)
    source = SearchSourceSettings(provider="brave", api_key_env="AGENT_BRAVE_KEY")

    with pytest.raises(ConfigError, match="AGENT_BRAVE_KEY"):
        web_search_tool(WebSearchSettings(live=source))


async def test_without_a_source_the_tool_is_built_and_each_call_says_so() -> None:
    (tool,) = build_tools(["web_search"], ToolEnvironment(settings=Settings()))
    assert isinstance(tool, WebSearchTool)
    assert not tool.configured

    with pytest.raises(ToolError) as failed:
        await tool.call({"query": "anything"}, AgentContext())
    assert str(failed.value) == NOT_CONFIGURED
    assert "[web_search.live]" in NOT_CONFIGURED


async def test_a_failing_provider_and_a_bad_query_are_tool_errors(
    tool: WebSearchTool, fake: FakeSearch
) -> None:
    with pytest.raises(ToolError, match="non-empty 'query'"):
        await tool.call({"query": "  "}, AgentContext())
    fake.status = 503
    with pytest.raises(ToolError, match="the web search failed"):
        await tool.call({"query": "kettle"}, AgentContext())


async def test_no_results_are_said_plainly(tool: WebSearchTool, fake: FakeSearch) -> None:
    fake.pages = ()
    assert await tool.call({"query": "nothing"}, AgentContext()) == "No web results for: nothing"
