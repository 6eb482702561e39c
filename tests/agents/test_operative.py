"""The operative: ticks resume a persisted session (history and state), on a schedule, and
across process restarts against a fake backend over a real socket."""

from __future__ import annotations

import asyncio
import itertools
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agentloom.agents import AgentContext, AgentFinished, ToolFinished, build_agent
from agentloom.agents.builders import AgentOptions
from agentloom.agents.operative import LAST_RESULT, OperativeAgent
from agentloom.agents.sessions import SessionStore
from agentloom.errors import UpstreamError
from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import ScriptedModel, Turn, raise_error, tool_call
from agentloom.llm import LLM
from agentloom.testing.backend import FakeBackend

TASK = "Track the user's favourite colour."


def _remember(key: str, value: object) -> Any:
    return tool_call("remember", {"key": key, "value": value})


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore.in_dir(tmp_path)


@pytest.fixture
async def make(store: SessionStore) -> AsyncIterator[Any]:
    made: list[OperativeAgent] = []

    def build(*turns: Turn, **options: Any) -> tuple[OperativeAgent, ScriptedModel]:
        model = ScriptedModel(list(turns))
        options.setdefault("task", TASK)
        agent = OperativeAgent(LLM("m", provider=model), store=store, **options)
        made.append(agent)
        return agent, model

    yield build
    for agent in made:
        await agent.aclose()


def _roles(request: ChatRequest) -> list[str]:
    return [message.role for message in request.messages]


async def test_the_second_tick_sees_the_first_ticks_history_and_state(
    make: Any, store: SessionStore
) -> None:
    agent, model = make([_remember("favourite", "teal")], "Noted: teal.", "It is teal.")

    first = await agent.tick()
    second = await agent.tick("What is my favourite colour?")

    assert first.content == "Noted: teal."
    assert second.content == "It is teal."
    assert second.metadata == {"session_id": "default", "tick": 2}
    request = model.requests[2]
    assert _roles(request) == ["system", "user", "assistant", "tool", "assistant", "user"]
    system = request.messages[0].content
    assert isinstance(system, str)
    assert TASK in system
    assert '"favourite": "teal"' in system
    assert f'"{LAST_RESULT}": "Noted: teal."' in system
    assert str(request.messages[1].content).startswith("Tick 1 (")
    assert str(request.messages[1].content).endswith(f"): {TASK}")
    assert request.messages[2].tool_calls[0].name == "remember"
    assert request.messages[3].content == "Saved 'favourite'. Saved keys: favourite."
    assert str(request.messages[5].content).endswith("): What is my favourite colour?")
    saved = await store.load("operative", "default")
    assert saved.state == {"favourite": "teal", LAST_RESULT: "It is teal."}
    assert [m.role for m in saved.history] == [*_roles(request)[1:], "assistant"]
    ticks = await store.ticks("operative", "default")
    assert [(t.number, t.status, t.summary) for t in ticks] == [
        (1, "ok", "Noted: teal."),
        (2, "ok", "It is teal."),
    ]


async def test_remember_null_forgets_and_auto_save_can_be_off(
    make: Any, store: SessionStore
) -> None:
    agent, _ = make(
        [_remember("a", 1), _remember("b", {"x": [1]})],
        [_remember("a", None)],
        "Done.",
        auto_save=False,
    )

    await agent.tick()

    assert (await store.load("operative", "default")).state == {"b": {"x": [1]}}


async def test_a_bad_remember_call_is_told_to_the_model(make: Any) -> None:
    agent, _ = make([tool_call("remember", {"value": 1})], "Sorry.")

    result = await agent.tick()

    (outcome,) = result.tool_results
    assert outcome.is_error
    assert "give the 'key'" in outcome.output


async def test_the_saved_history_is_bounded_at_a_turn(make: Any, store: SessionStore) -> None:
    agent, _ = make("One.", [_remember("k", 1)], "Two.", "Three.", max_history=4)

    for _ in range(3):
        await agent.tick()

    history = (await store.load("operative", "default")).history
    assert [m.role for m in history] == ["user", "assistant"]
    assert history[1].content == "Three."


async def test_sessions_come_from_the_context(make: Any, store: SessionStore) -> None:
    agent, _ = make("For A.", "For B.")

    events = [event async for event in agent.stream(TASK, AgentContext(session_id="a"))]
    await agent.tick(session_id="b")

    assert isinstance(events[-1], AgentFinished)
    assert await store.sessions("operative") == ["b", "a"]
    assert (await store.load("operative", "a")).state == {LAST_RESULT: "For A."}


async def test_a_tick_without_a_final_answer_is_incomplete(make: Any, store: SessionStore) -> None:
    agent, _ = make([_remember("k", 1)], [_remember("k", 2)], max_turns=2)

    result = await agent.tick()

    assert result.stop_reason == "max_turns"
    (tick,) = await store.ticks("operative", "default")
    assert tick.status == "incomplete"


async def test_a_failing_tick_is_recorded_and_the_schedule_goes_on(
    make: Any, store: SessionStore
) -> None:
    agent, _ = make(
        "First.",
        [raise_error(UpstreamError("the backend fell over", status=503))],
        "Third.",
    )

    reports = await agent.run_every(0, ticks=3)

    assert [r.record.status if r.record else None for r in reports] == ["ok", "error", "ok"]
    assert reports[1].result is None
    assert "the backend fell over" in (reports[1].error or "")
    failed = reports[1].record
    assert failed is not None
    assert "the backend fell over" in failed.summary
    assert [r.result.content for r in (reports[0], reports[2]) if r.result] == ["First.", "Third."]
    history = (await store.load("operative", "default")).history
    assert [m.content for m in history if m.role == "assistant"] == ["First.", "Third."]
    ticks = await store.ticks("operative", "default")
    for earlier, later in itertools.pairwise(ticks):  # one after the other
        assert earlier.finished_at is not None
        assert earlier.finished_at <= later.started_at


def _stopping(stop: asyncio.Event, answers: list[str]) -> Any:
    """A responder answering ``answers`` in turn, setting ``stop`` with the last."""
    said = iter(answers)

    def respond(request: ChatRequest) -> str:
        answer = next(said)
        if answer == answers[-1]:
            stop.set()
        return answer

    return respond


async def test_the_schedule_runs_until_the_stop_event(make: Any) -> None:
    stop = asyncio.Event()
    agent, model = make()
    model.respond_with(_stopping(stop, ["One.", "Two.", "Three."]))

    reports = await agent.run_every(0, stop_event=stop)

    assert [r.result.content for r in reports if r.result] == ["One.", "Two.", "Three."]


async def test_the_stop_event_ends_the_wait_for_the_next_tick(make: Any) -> None:
    stop = asyncio.Event()
    agent, model = make()
    model.respond_with(_stopping(stop, ["Only."]))

    reports = await asyncio.wait_for(agent.run_every(3600, stop_event=stop), timeout=30)

    assert [r.result.content for r in reports if r.result] == ["Only."]


async def test_the_registry_builds_it_with_the_input_as_task(tmp_path: Path) -> None:
    model = ScriptedModel(["On it."])
    agent = build_agent("operative", LLM("m", provider=model), (), AgentOptions(data_dir=tmp_path))

    result = await agent.run("Watch the queue.", AgentContext(session_id="ops"))

    assert result.content == "On it."
    assert str(model.requests[0].messages[-1].content).endswith("): Watch the queue.")
    saved = await SessionStore.in_dir(tmp_path).load("operative", "ops")
    assert saved.state == {LAST_RESULT: "On it."}


async def test_tool_events_pass_through(make: Any) -> None:
    agent, _ = make([_remember("k", "v")], "Ok.")

    events = [event async for event in agent.stream(TASK)]

    finished = [e.outcome.name for e in events if isinstance(e, ToolFinished)]
    assert finished == ["remember"]


# --- across process restarts -----------------------------------------------------------------

TICK = """
import asyncio, sys
from pathlib import Path
from agentloom.agents.operative import OperativeAgent
from agentloom.agents.sessions import SessionStore
from agentloom.llm import LLM

async def main() -> None:
    llm = LLM(sys.argv[2], base_url=sys.argv[1], api_key="test", path="completions")
    store = SessionStore.in_dir(Path(sys.argv[3]))
    agent = OperativeAgent(llm, store=store, task=sys.argv[4], session_id="proc")
    try:
        result = await agent.tick()
    finally:
        await agent.aclose()
        await llm.aclose()
    print(result.content)

asyncio.run(main())
"""


def _tick_in_a_new_process(backend: FakeBackend, data_dir: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", TICK, backend.base_url, backend.model, str(data_dir), TASK],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_history_and_state_survive_a_process_restart(
    backend: FakeBackend, scripted: ScriptedModel, tmp_path: Path
) -> None:
    scripted.add_turns([_remember("favourite", "teal")], "Noted: teal.", "Still teal.")

    assert _tick_in_a_new_process(backend, tmp_path) == "Noted: teal."
    assert _tick_in_a_new_process(backend, tmp_path) == "Still teal."

    messages = backend.requests[2]["messages"]  # the second process's request
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert '"favourite": "teal"' in messages[0]["content"]
    assert f'"{LAST_RESULT}": "Noted: teal."' in messages[0]["content"]
    assert messages[1]["content"].startswith("Tick 1 (")
    assert messages[2]["tool_calls"][0]["function"]["name"] == "remember"
    assert messages[3]["tool_call_id"] == messages[2]["tool_calls"][0]["id"]
    assert messages[4]["content"] == "Noted: teal."
    assert messages[5]["content"].startswith("Tick 2 (")
