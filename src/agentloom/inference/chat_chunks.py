"""Reading one decoded line of a streamed chat completion into typed :data:`Chunk` values
(plain JSON: the SDK's chunk models cost ~0.1 ms a chunk). What is not a chunk raises
:class:`InvalidChunk`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Final

from agentloom.inference.base import (
    Chunk,
    Finish,
    FinishReason,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    TokenLogprob,
    ToolCallDelta,
    TopLogprob,
    Usage,
)
from agentloom.json_codec import LARGEST

_FINISH_REASONS: Final[Mapping[str, FinishReason]] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "content_filter": "content_filter",
    "function_call": "tool_calls",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_length": "length",
}


class InvalidChunk(Exception):
    """A stream line that is JSON but not a chat completion chunk."""


def chunks_of(data: object, part: str = "delta") -> tuple[list[Chunk], Usage | None]:
    """The chunks in one decoded stream line, and its usage (reported once, at the end).
    ``part="message"`` reads a whole (non-streamed) ``chat.completion`` the same way: its
    message is the one delta of its choice."""
    if not isinstance(data, dict):
        raise InvalidChunk(data)
    choices = data.get("choices")
    usage = data.get("usage")
    if not isinstance(choices, list) and (choices is not None or usage is None):
        raise InvalidChunk(data)
    out: list[Chunk] = []
    for choice in choices or ():
        _choice(choice, part, out)
    return out, usage_of(usage) if usage else None


def _choice(choice: object, part: str, out: list[Chunk]) -> None:
    if not isinstance(choice, dict):
        raise InvalidChunk(choice)
    delta = choice.get(part)
    if delta:
        if not isinstance(delta, dict):
            raise InvalidChunk(choice)
        _delta(delta, choice.get("logprobs"), out)
    reason = choice.get("finish_reason")
    if reason:
        out.append(Finish(_FINISH_REASONS.get(_text(reason) or "", "stop")))


def _delta(delta: dict[str, object], logprobs: object, out: list[Chunk]) -> None:
    thought = _text(delta.get("reasoning_content")) or _text(delta.get("reasoning"))
    if thought:
        out.append(ReasoningDelta(thought))
    content = _text(delta.get("content"))
    tokens = _logprobs(logprobs) if logprobs else ()
    if content or tokens:
        out.append(TextDelta(content or "", tokens))
    refusal = _text(delta.get("refusal"))
    if refusal:
        out.append(RefusalDelta(refusal))
    calls = delta.get("tool_calls")
    if calls:
        if not isinstance(calls, list):
            raise InvalidChunk(delta)
        out.extend(_tool_call_delta(position, call) for position, call in enumerate(calls))


def _tool_call_delta(position: int, call: object) -> ToolCallDelta:
    if not isinstance(call, dict):
        raise InvalidChunk(call)
    function = call.get("function") or {}
    if not isinstance(function, dict):
        raise InvalidChunk(call)
    index = call.get("index")
    return ToolCallDelta(
        index=index if isinstance(index, int) else position,
        id=_text(call.get("id")),
        name=_text(function.get("name")),
        arguments=_text(function.get("arguments")) or "",
    )


def _logprobs(value: object) -> tuple[TokenLogprob, ...]:
    content = value.get("content") if isinstance(value, dict) else None
    if not isinstance(content, list):
        return ()
    return tuple(_token_logprob(entry) for entry in content)


def _token_logprob(entry: object) -> TokenLogprob:
    if not isinstance(entry, dict):
        raise InvalidChunk(entry)
    tops = entry.get("top_logprobs")
    return TokenLogprob(
        token=_text(entry.get("token")) or "",
        logprob=_logprob(entry.get("logprob")),
        bytes=_bytes(entry.get("bytes")),
        top_logprobs=tuple(_top_logprob(top) for top in tops) if isinstance(tops, list) else (),
    )


def _top_logprob(entry: object) -> TopLogprob:
    if not isinstance(entry, dict):
        raise InvalidChunk(entry)
    return TopLogprob(
        token=_text(entry.get("token")) or "",
        logprob=_logprob(entry.get("logprob")),
        bytes=_bytes(entry.get("bytes")),
    )


def usage_of(value: object) -> Usage:
    """A chat completion's ``usage`` object as :class:`Usage` (counts absent: 0)."""
    if not isinstance(value, dict):
        raise InvalidChunk(value)
    prompt = value.get("prompt_tokens_details")
    completion = value.get("completion_tokens_details")
    return Usage(
        input_tokens=_count(value.get("prompt_tokens")),
        output_tokens=_count(value.get("completion_tokens")),
        cached_tokens=_count(prompt.get("cached_tokens")) if isinstance(prompt, dict) else 0,
        reasoning_tokens=(
            _count(completion.get("reasoning_tokens")) if isinstance(completion, dict) else 0
        ),
    )


def _text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise InvalidChunk(value)


def _number(value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise InvalidChunk(value)


def _logprob(value: object) -> float:
    """A log probability; one that is not finite (``-Infinity``: a token the backend deems
    impossible, or ``NaN``) as the lowest double, which JSON can write and a client reads back
    as a probability of zero."""
    number = _number(value)
    return number if math.isfinite(number) else -LARGEST


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _bytes(value: object) -> tuple[int, ...] | None:
    """A token's UTF-8 bytes; ``None`` when they are not bytes (0 to 255)."""
    if isinstance(value, list) and all(isinstance(b, int) and 0 <= b <= 255 for b in value):
        return tuple(value)
    return None


class CallIndexes:
    """Stable indexes for the tool calls of one stream. Some backends send every parallel call
    at index 0, each with its own id: a new id at an index already in use starts a new call
    (under an index of its own) instead of adding its arguments to the previous one."""

    FIRST_OWN = 10_000  # indexes given here, clear of any a backend sends

    def __init__(self) -> None:
        self._ids: dict[int, str] = {}  # a backend index -> the id of its current call
        self._own: dict[int, int] = {}  # a backend index -> the index its deltas go under
        self._given = 0

    def of(self, delta: ToolCallDelta) -> ToolCallDelta:
        known = self._ids.get(delta.index)
        if delta.id is not None and known is not None and known != delta.id:
            self._own[delta.index] = self.FIRST_OWN + self._given
            self._given += 1
        if delta.id is not None:
            self._ids[delta.index] = delta.id
        index = self._own.get(delta.index, delta.index)
        return delta if index == delta.index else replace(delta, index=index)
