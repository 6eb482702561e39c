"""``agentloom.Client`` (``Jarvis``): the seed's SDK sample against a fake backend over HTTP,
the whole result, memory, closing, and the clear errors."""

from __future__ import annotations

import asyncio

import pytest

import agentloom
from agentloom.agents.base import MEMORY_HEAD, ToolOutcome
from agentloom.agents.builders import UnknownNameError
from agentloom.inference.scripted import ScriptedModel, tool_call
from agentloom.testing.backend import FakeBackend


@pytest.fixture(autouse=True)
def _connection(backend: FakeBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sample's ``Jarvis()`` finds the fake backend in the environment."""
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "AGENTLOOM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTLOOM_BASE_URL", backend.base_url)
    monkeypatch.setenv("AGENTLOOM_MODEL", backend.model)


def test_the_seeds_sdk_sample_runs(
    scripted: ScriptedModel, backend: FakeBackend, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted.add_turn("Hello! How can I help?")
    scripted.add_turn([tool_call("calculator", {"expression": "0.15 * 340"})])
    scripted.add_turn("15% of 340 is 51.")
    scripted.add_turn("Thought: I know this.\nFinal Answer: 16")
    scripted.add_turn([tool_call("calculator", {"expression": "sqrt(144)"})])
    scripted.add_turn("The square root of 144 is 12.")

    # The seed's sample, its package's name adapted (from openjarvis import Jarvis).
    from agentloom import Jarvis

    j = Jarvis()

    # Simple agent
    response = j.ask("Hello", agent="simple")

    # Orchestrator with tools
    response = j.ask(
        "Calculate 15% of 340",
        agent="orchestrator",
        tools=["calculator"],
    )

    # NativeReActAgent with tools
    response = j.ask(
        "What is sqrt(256)?",
        agent="native_react",
        tools=["calculator", "think"],
    )

    # Full result with tool details
    result = j.ask_full(
        "What is the square root of 144?",
        agent="orchestrator",
        tools=["calculator", "think"],
    )
    print(result["content"])
    print(result["turns"])
    print(result["tool_results"])

    j.close()

    assert response == "16"
    assert result.content == "The square root of 144 is 12."
    assert result["turns"] == 2
    (outcome,) = result.tool_results
    assert isinstance(outcome, ToolOutcome)
    assert (outcome.name, outcome.output) == ("calculator", "12")
    printed = capsys.readouterr().out.splitlines()
    assert printed[:2] == ["The square root of 144 is 12.", "2"]
    assert "calculator" in printed[2]
    assert backend.requests[1]["messages"][-1]["content"] == "Calculate 15% of 340"
    assert [t["function"]["name"] for t in backend.requests[4]["tools"]] == [
        "calculator",
        "think",
    ]


def test_a_client_is_a_context_manager_and_shows_memory(
    scripted: ScriptedModel, backend: FakeBackend
) -> None:
    scripted.add_turn("Bonjour Ada.")

    with agentloom.Client(agent="simple", timeout=30) as client:
        answer = client.ask("Who am I?", memory=["The user's name is Ada."], instructions="Hi.")

    assert answer == "Bonjour Ada."
    system = backend.requests[0]["messages"][0]
    assert system["content"] == f"Hi.\n\n{MEMORY_HEAD}\n[1] The user's name is Ada."
    with pytest.raises(RuntimeError, match="this client is closed"):
        client.ask("Again?")
    client.close()  # closing twice is allowed


def test_bad_names_and_a_running_loop_are_clear_errors() -> None:
    client = agentloom.Client()
    try:
        with pytest.raises(UnknownNameError, match="unknown agent 'nope'"):
            client.ask("Hi", agent="nope")
        with pytest.raises(UnknownNameError, match="unknown tool"):
            client.ask("Hi", tools=["abacus"])

        async def inside() -> None:
            client.ask("Hi")

        with pytest.raises(RuntimeError, match=r"await agentloom\.ask_async"):
            asyncio.run(inside())
        with pytest.raises(KeyError):
            agentloom.agents.AgentResult("x")["nonsense"]  # type: ignore[index]
    finally:
        client.close()
    with pytest.raises(ValueError, match="timeout"):
        agentloom.Client(timeout=0)
