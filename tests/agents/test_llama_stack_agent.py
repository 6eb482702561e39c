"""The synchronous ``Agent`` of ``agentloom.agents.llama_stack`` (Llama Stack client's names)
against agentloom over a real socket, with the scripted model: the seed's calls without
``await``."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest

from agentloom.agents.llama_stack import Agent, AgentEventLogger
from agentloom.agents.tools.base import function_tool
from agentloom.agents.turn_steps import InferenceStep, ToolExecutionStep
from agentloom.config import Settings
from agentloom.inference.scripted import ScriptedModel, text, tool_call
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend
from agentloom.testing.serving import serve


@function_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture
def base_url(settings: Settings) -> Iterator[str]:
    with serve(create_app(settings)) as url:
        yield url


def test_a_synchronous_agent_streams_and_collects_turns(
    base_url: str, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(text("Adding."), tool_call("add", {"a": 40, "b": 2}))
    scripted.add_turns("It is 42.", "Still 42.")
    client = openai.OpenAI(base_url=base_url, api_key="unused", default_headers={"X-Team": "a"})
    with Agent(client, model=backend.model, tools=[add]) as agent:
        session_id = agent.create_session("sync")

        response = agent.create_turn(
            messages=[{"role": "user", "content": "40 + 2?"}], session_id=session_id
        )
        log = [str(line) + line.end for line in AgentEventLogger().log(response)]
        result = agent.create_turn(
            messages=[{"role": "user", "content": "Again?"}], session_id=session_id, stream=False
        )

    assert "".join(log).splitlines() == [
        "inference> Adding.",
        'tool_execution> Tool:add Args:{"a": 40, "b": 2}',
        "tool_execution> Tool:add Response:42",
        "inference> It is 42.",
    ]
    assert result.output_message.content == "Still 42."
    assert [type(step) for step in result.steps] == [InferenceStep]
    assert len(backend.requests) == 3
    assert agent.agent.client.default_headers["X-Team"] == "a"
    assert agent.agent.client.is_closed()
    assert not client.is_closed()  # the caller's


def test_an_abandoned_stream_leaves_the_agent_usable(
    base_url: str, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(text("Adding."), tool_call("add", {"a": 1, "b": 1}))
    scripted.add_turns("Two.", "Done.")
    with Agent(base_url, model=backend.model, tools=[add]) as agent:
        session_id = agent.create_session()
        events = agent.create_turn("1 + 1?", session_id)
        for event in events:
            if event.type == "tool_finished":
                break
        events.close()
        result = agent.create_turn("Go on.", session_id, stream=False)

    assert result.status == "completed"
    assert result.output_text == "Two."
    assert not any(isinstance(s, ToolExecutionStep) for s in result.steps)


async def test_inside_an_event_loop_it_points_to_the_async_agent(backend: FakeBackend) -> None:
    agent = Agent("http://127.0.0.1:9/v1", model=backend.model)

    with pytest.raises(RuntimeError, match=r"use agentloom\.agents\.llama_stack\.AsyncAgent"):
        agent.create_session()
