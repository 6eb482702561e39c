"""The openhands agent: without the SDK it is a clear invalid request; with a stand-in for it
(tests/agents/fake_runtimes/openhands, put on sys.path) it runs a conversation whose model is the
fake backend over HTTP, and OpenHands' events come back as agent events and a result."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from contextlib import aclosing
from pathlib import Path

import pytest

from agentloom.agents import AgentContext, AgentFinished, AgentOptions, TextDelta
from agentloom.agents.base import AgentEvent, ToolFinished, ToolStarted, TurnStarted
from agentloom.agents.builders import build_agent
from agentloom.agents.openhands import INSTALL, OpenHandsAgent, openhands_available
from agentloom.agents.tools.calculator import CalculatorTool
from agentloom.errors import InvalidRequestError, UpstreamError
from agentloom.inference.scripted import ScriptedModel, raise_error, tool_call
from agentloom.llm import LLM
from agentloom.testing.backend import FakeBackend

FAKES = Path(__file__).parent / "fake_runtimes"


@pytest.fixture
def fake_openhands(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The stand-in SDK importable as ``openhands`` for one test, forgotten after."""
    monkeypatch.syspath_prepend(str(FAKES))
    yield
    for name in [name for name in sys.modules if name.split(".")[0] == "openhands"]:
        del sys.modules[name]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "b.txt").write_text("b")
    return tmp_path


def _llm(backend: FakeBackend) -> LLM:
    return LLM(backend.model, base_url=backend.base_url, api_key="sk-openhands-test")


@pytest.mark.skipif(openhands_available(), reason="the OpenHands SDK is installed here")
def test_without_the_sdk_making_the_agent_names_the_extra() -> None:
    llm = LLM("m", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(InvalidRequestError, match="needs the OpenHands SDK") as caught:
        build_agent("openhands", llm)
    assert INSTALL in caught.value.message
    assert "Python 3.12 or later" in caught.value.message


@pytest.mark.usefixtures("fake_openhands")
def test_an_in_process_model_or_agentloom_tools_are_refused() -> None:
    with pytest.raises(InvalidRequestError, match="give it an LLM with a base_url"):
        build_agent("openhands", LLM("m", provider=ScriptedModel()))
    with pytest.raises(InvalidRequestError, match="OpenHands' own tools"):
        build_agent("openhands", LLM("m", base_url="http://x/v1"), [CalculatorTool()])


@pytest.mark.usefixtures("fake_openhands")
async def test_a_conversation_runs_and_its_events_come_back(
    backend: FakeBackend, scripted: ScriptedModel, workspace: Path
) -> None:
    scripted.add_turns([tool_call("terminal", {"command": "ls"})], "Two files: a.txt, b.txt.")
    options = AgentOptions(instructions="Be brief.", max_turns=5)
    agent = build_agent("openhands", _llm(backend), (), options)
    assert isinstance(agent, OpenHandsAgent)
    context = AgentContext(workspace=workspace)
    events: list[AgentEvent] = [e async for e in agent.stream("What is here?", context)]
    kinds = [type(event) for event in events]
    assert kinds == [TurnStarted, ToolStarted, ToolFinished, TurnStarted, TextDelta, AgentFinished]
    started, finished = events[1], events[2]
    assert isinstance(started, ToolStarted)
    assert (started.call.name, started.call.arguments) == ("terminal", '{"command": "ls"}')
    assert isinstance(finished, ToolFinished)
    assert finished.outcome.output == "a.txt\nb.txt"  # the tool ran in the run's workspace
    last = events[-1]
    assert isinstance(last, AgentFinished)
    result = last.result
    assert result.content == "Two files: a.txt, b.txt."
    assert (result.turns, result.stop_reason) == (2, "final")
    assert result.usage.input_tokens > 0
    assert result.usage.output_tokens > 0
    assert result.metadata == {"runtime": "openhands", "status": "finished"}
    first = backend.requests[0]
    assert first["model"] == backend.model  # LiteLLM's openai/<model>, at our endpoint
    assert first["messages"][0]["content"] == "Be brief.\n\nWhat is here?"


@pytest.mark.usefixtures("fake_openhands")
async def test_a_conversation_out_of_iterations_stops_at_max_turns(
    backend: FakeBackend, scripted: ScriptedModel, workspace: Path
) -> None:
    scripted.respond_with(lambda request: [tool_call("terminal", {"command": "ls"})])
    agent = build_agent("openhands", _llm(backend), (), AgentOptions(max_turns=2))
    result = await agent.run("Loop", AgentContext(workspace=workspace))
    assert result.stop_reason == "max_turns"
    assert len(result.tool_results) == 2


@pytest.mark.usefixtures("fake_openhands")
async def test_a_model_failure_is_an_upstream_error(
    backend: FakeBackend, scripted: ScriptedModel, workspace: Path
) -> None:
    scripted.add_turn(raise_error(UpstreamError("overloaded", status=503)))
    agent = build_agent("openhands", _llm(backend))
    with pytest.raises(UpstreamError, match="OpenHands failed: HTTPError"):
        await agent.run("Hi", AgentContext(workspace=workspace))


@pytest.mark.usefixtures("fake_openhands")
async def test_closing_the_stream_early_pauses_the_conversation(
    backend: FakeBackend, scripted: ScriptedModel, workspace: Path
) -> None:
    scripted.respond_with(lambda request: [tool_call("terminal", {"command": "ls"})])
    agent = build_agent("openhands", _llm(backend), (), AgentOptions(max_turns=1000))
    async with aclosing(agent.stream("Loop", AgentContext(workspace=workspace))) as events:
        async for event in events:
            if isinstance(event, ToolFinished):
                break
    calls = len(backend.requests)
    assert calls < 1000  # paused after the step it was in, and waited for
    await asyncio.sleep(0.05)
    assert len(backend.requests) == calls  # nothing runs on behind the caller's back
