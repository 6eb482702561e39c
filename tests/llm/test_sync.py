"""The synchronous ``completion()`` and ``responses()``: from a thread with no event loop, from
one running a loop, from several threads at once, within a deadline."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from agentloom.config import Settings
from agentloom.errors import UpstreamTimeoutError
from agentloom.inference.scripted import ScriptedModel, delay, tool_call
from agentloom.llm import LLM, ConversationState, FunctionTool, LLMResponse, Message
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend, serve

HI = [Message.user("Hi")]


def sync_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("agentloom-llm-sync")]


def test_completion_without_an_event_loop(backend: FakeBackend, scripted: ScriptedModel) -> None:
    scripted.add_turns("One.", "Two.")

    with LLM(backend.model, base_url=backend.base_url, max_retries=0) as llm:
        first = llm.completion(HI)
        second = llm.completion([*HI, first.message, Message.user("Again")])  # same clients
        assert len(sync_threads()) == 1

    assert (first.text, second.text) == ("One.", "Two.")
    assert first.metrics.path == "completions"
    assert sync_threads() == []  # close() ended the loop's thread


async def test_completion_inside_a_running_event_loop(
    backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns("Sync.", "Async.")

    async with LLM(backend.model, base_url=backend.base_url, max_retries=0) as llm:
        synchronous = llm.completion(HI)  # never asyncio.run inside this loop
        asynchronous = await llm.acompletion(HI)  # and the async clients are untouched

    assert (synchronous.text, asynchronous.text) == ("Sync.", "Async.")
    assert sync_threads() == []  # aclose() closed the sync side too


def test_calls_from_several_threads_at_once(scripted: ScriptedModel) -> None:
    scripted.respond_with(lambda request: f"echo {request.messages[-1].content}")

    with LLM("scripted", provider=scripted) as llm, ThreadPoolExecutor(4) as pool:
        replies = list(pool.map(lambda n: llm.completion([Message.user(str(n))]), range(8)))

    assert [r.text for r in replies] == [f"echo {n}" for n in range(8)]


def test_a_call_past_its_deadline_is_a_timeout(scripted: ScriptedModel) -> None:
    scripted.add_turns([delay(30), "Too late."], "In time.")

    with LLM("scripted", provider=scripted, sync_deadline=0.5) as llm:
        with pytest.raises(UpstreamTimeoutError, match=r"within its 0.5 s deadline"):
            llm.completion(HI)
        assert llm.completion(HI).text == "In time."  # the loop goes on serving


LOOKUP = FunctionTool(
    "lookup", "Look a word up.", {"type": "object", "properties": {"word": {"type": "string"}}}
)


def test_responses_synchronously_with_a_tool_round_trip(
    settings: Settings, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    """The seed's flow (001 §3.2, 003's example): responses() with tools, the tool result sent
    back as a function_call_output, in stateful mode (previous_response_id)."""
    scripted.add_turns([tool_call("lookup", {"word": "loom"}, "c1")], "A weaving frame.")
    state = ConversationState()
    history = [Message.system("Be brief."), Message.user("Define loom.")]

    with (
        serve(create_app(settings)) as url,
        LLM(backend.model, base_url=url, max_retries=0, state_mode="stateful") as llm,
    ):
        first: LLMResponse = llm.responses(history, [LOOKUP], state=state)
        (call,) = first.tool_calls
        history += [first.message, Message.tool(call.call_id, "a frame for weaving", "lookup")]
        second = llm.responses(history, [LOOKUP], state=state)

    assert (call.name, call.origin) == ("lookup", "responses")
    assert second.text == "A weaving frame."
    assert state.previous_response_id == second.response_id
    assert scripted.requests[-1].messages[-1].tool_call_id == "c1"
