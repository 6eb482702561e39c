"""The server ``Agent`` helper with a hosted tool: the server runs web_search (against a fake
search provider over real HTTP) and the turn reports the call."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import openai
import pytest

from agentloom.agents.event_logger import EventLogger
from agentloom.agents.remote import Agent
from agentloom.agents.turns import HostedToolCall, TurnCompleted
from agentloom.config import SearchSourceSettings, Settings, WebSearchSettings
from agentloom.inference.scripted import ScriptedModel, tool_call
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import make_settings
from tests.tools.search_fakes import FakeSearch, running_fake


@pytest.fixture
async def search() -> AsyncIterator[FakeSearch]:
    async with running_fake() as fake:
        yield fake


@pytest.fixture
def settings(backend: FakeBackend, tmp_path: Path, search: FakeSearch) -> Settings:
    web = WebSearchSettings(
        offline=SearchSourceSettings(provider="searxng", base_url=search.base_url, timeout=2)
    )
    base = make_settings(backend, f"sqlite:///{tmp_path / 'agentloom.db'}")
    return base.model_copy(update={"web_search": web})


async def test_a_hosted_web_search_is_reported(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("web_search", {"query": "zephyr kettle"}))
    scripted.add_turn("It boils a litre in ninety seconds.")
    agent = Agent(
        client, model=backend.model, tools=[{"type": "web_search", "external_web_access": False}]
    )
    session = await agent.create_session()

    events = [event async for event in agent.create_turn("How fast is it?", session)]

    hosted = [event.item for event in events if isinstance(event, HostedToolCall)]
    assert [item.type for item in hosted] == ["web_search_call"]
    result = events[-1]
    assert isinstance(result, TurnCompleted)
    assert [item.type for item in result.result.hosted_calls] == ["web_search_call"]
    log = EventLogger().text(events)
    assert 'tool_execution> web_search "zephyr kettle" (on the server)' in log
    assert log.endswith("inference> It boils a litre in ninety seconds.\n")
