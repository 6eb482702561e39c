"""Joining the deltas of a collected answer."""

from __future__ import annotations

from agentloom.inference.base import (
    Finish,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    TokenLogprob,
    ToolCallDelta,
)
from agentloom.inference.chat_chunks import joined_deltas


def test_runs_of_text_and_of_reasoning_are_joined_in_order() -> None:
    first = TokenLogprob(token="Hel", logprob=-0.1)
    second = TokenLogprob(token="lo", logprob=-0.2)
    chunks = [
        ReasoningDelta("think"),
        ReasoningDelta("ing"),
        TextDelta("Hel", (first,)),
        TextDelta("lo", (second,)),
        RefusalDelta("no"),
        TextDelta("!"),
        ToolCallDelta(index=0, id="call_1", name="f", arguments="{}"),
        Finish("stop"),
    ]
    assert joined_deltas(chunks) == [
        ReasoningDelta("thinking"),
        TextDelta("Hello", (first, second)),
        RefusalDelta("no"),
        TextDelta("!"),
        ToolCallDelta(index=0, id="call_1", name="f", arguments="{}"),
        Finish("stop"),
    ]


def test_nothing_to_join() -> None:
    assert joined_deltas([]) == []
    assert joined_deltas([TextDelta("a")]) == [TextDelta("a")]
