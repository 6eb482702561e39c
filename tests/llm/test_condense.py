"""The SDK-side condenser: an overflowing call is retried once with its oldest turns summarised
by the same model; a second overflow is the caller's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentloom.bus import EventBus
from agentloom.errors import ContextLengthExceededError
from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import ScriptedModel, Turn, raise_error
from agentloom.llm import (
    LLM,
    Condenser,
    ConversationState,
    LLMCall,
    Message,
    MessageToolCall,
)
from agentloom.llm.condense import INSTRUCTIONS, SUMMARY_PREFIX
from agentloom.testing.backend import FakeBackend
from tests.llm.conftest import MakeLLM

WINDOW = 400  # characters the scripted model takes before it overflows


def _chars(request: ChatRequest) -> int:
    total = 0
    for message in request.messages:
        content = message.content
        total += len(content) if isinstance(content, str) else 0
    return total


def windowed(request: ChatRequest) -> Turn:
    """A model with a small context window for conversations, that summarises when asked to
    (the transcript of the oldest turns fits: the summary call leaves the rest out)."""
    if request.messages[0].content == INSTRUCTIONS:
        return "Ada asked about looms twice; both were answered."
    if _chars(request) > WINDOW:
        return overflow()
    return f"Answered, from {len(request.messages)} messages."


def overflow() -> Turn:
    return [raise_error(ContextLengthExceededError("the input is longer than the window"))]


def long_history() -> list[Message]:
    history = [Message.system("Be brief.")]
    for n in range(4):
        history += [Message.user(f"Question {n}: " + "tell me about looms " * 5)]
        history += [Message.assistant(f"Answer {n}: " + "looms weave " * 5)]
    return [*history, Message.user("And now?")]


@pytest.fixture
async def chat_llm(backend: FakeBackend, scripted: ScriptedModel) -> AsyncIterator[LLM]:
    scripted.respond_with(windowed)
    async with LLM(
        backend.model, base_url=backend.base_url, max_retries=0, condenser=Condenser(keep_recent=2)
    ) as llm:
        yield llm


async def test_an_overflow_is_condensed_and_retried_once(
    chat_llm: LLM, backend: FakeBackend
) -> None:
    history = long_history()

    reply = await chat_llm.acompletion(history)

    assert reply.text == "Answered, from 4 messages."
    condensation = reply.condensation
    assert condensation is not None
    assert condensation.summary == "Ada asked about looms twice; both were answered."
    assert condensation.replaced == 7  # all but the system message and the last two
    assert condensation.messages == (
        history[0],
        Message.user(SUMMARY_PREFIX + condensation.summary),
        *history[-2:],
    )
    summary_request = backend.requests[1]["messages"]
    assert summary_request[0] == {"role": "system", "content": INSTRUCTIONS}
    assert "user: Question 0: tell me about looms" in summary_request[1]["content"]
    assert "assistant: Answer 2: looms weave" in summary_request[1]["content"]
    assert backend.requests[1]["max_tokens"] == 1024
    assert [m["role"] for m in backend.requests[2]["messages"]] == [
        "system",
        "user",
        "assistant",
        "user",
    ]


async def test_each_model_call_is_reported(
    backend: FakeBackend, scripted: ScriptedModel, calls: list[LLMCall], bus: EventBus
) -> None:
    scripted.respond_with(windowed)

    async with LLM(backend.model, base_url=backend.base_url, bus=bus, condenser=Condenser()) as llm:
        await llm.acompletion(long_history())

    assert [c.error for c in calls] == ["context_length", None, None]


async def test_without_a_condenser_the_overflow_is_raised(
    backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.respond_with(windowed)

    async with LLM(backend.model, base_url=backend.base_url, max_retries=0) as llm:
        with pytest.raises(ContextLengthExceededError, match="longer than the window"):
            await llm.acompletion(long_history())

    assert len(backend.requests) == 1


async def test_a_second_overflow_is_the_callers(chat_llm: LLM, backend: FakeBackend) -> None:
    history = [*long_history(), Message.user("x" * (WINDOW + 1))]  # the recent part alone is

    with pytest.raises(ContextLengthExceededError, match="still overflows") as caught:
        await chat_llm.acompletion(history)

    assert caught.value.code == "context_length_exceeded"
    assert len(backend.requests) == 3  # the call, the summary, the one retry


async def test_an_overflowing_summary_call_is_the_callers(
    chat_llm: LLM, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.respond_with(lambda request: overflow())

    with pytest.raises(ContextLengthExceededError, match="longer than the window"):
        await chat_llm.acompletion(long_history())

    assert len(backend.requests) == 2  # the call and the summary; no retry


async def test_nothing_to_condense_raises_the_overflow(chat_llm: LLM, backend: FakeBackend) -> None:
    with pytest.raises(ContextLengthExceededError, match="longer than the window"):
        await chat_llm.acompletion([Message.user("x" * (WINDOW + 1))])

    assert len(backend.requests) == 1


def test_a_tool_result_stays_with_its_call() -> None:
    call = MessageToolCall("c1", "lookup", "{}")
    history = [
        Message.system("S"),
        Message.user("Q1"),
        Message.assistant(None, (call,)),
        Message.tool("c1", "result"),
        Message.assistant("A1"),
    ]

    parts = Condenser(keep_recent=2).split(history)

    assert parts is not None
    instructions, oldest, recent = parts
    assert instructions == [history[0]]
    assert oldest == [history[1]]  # the cut moved back past the tool result to its call
    assert recent == history[2:]
    assert Condenser(keep_recent=4).split(history) is None  # nothing older to summarise


def test_keep_recent_must_keep_something() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Condenser(keep_recent=0)


async def test_a_stateful_conversation_is_condensed_and_stored_again(
    server_llm: MakeLLM, scripted: ScriptedModel, wire: list[dict[str, Any]]
) -> None:
    scripted.respond_with(windowed)
    llm = server_llm(state_mode="stateful", condenser=Condenser(keep_recent=2))
    state = ConversationState()
    history = [Message.system("Be brief."), Message.user("Hello.")]
    first = await llm.aresponses(history, state=state)
    history = [*long_history()[:-1], first.message, Message.user("And now?")]
    state.sent = 2  # the server holds the first two of them (with ``first``)

    reply = await llm.aresponses(history, state=state)

    assert reply.condensation is not None
    sent = wire[-1]
    assert "previous_response_id" not in sent  # the condensed history, sent whole
    assert sent["store"] is True
    assert sent["input"][0]["content"].startswith(SUMMARY_PREFIX)
    assert state.previous_response_id == reply.response_id
    assert state.sent == len(reply.condensation.messages) + 1
