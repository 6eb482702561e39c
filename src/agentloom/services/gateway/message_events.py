"""The provider seam's chunks as Anthropic's Message, or as its stream of events in Anthropic's
order: ``message_start``, a ``ping``, for each content block ``content_block_start``, its
deltas (``text_delta``, ``thinking_delta``, ``input_json_delta``) and ``content_block_stop``,
then ``message_delta`` (the stop reason and the usage) and ``message_stop``. A failure after
the stream began is raised on; the edge ends the stream with Anthropic's ``error`` event.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Literal

from agentloom import json_codec
from agentloom.api import anthropic as a
from agentloom.ids import new_id
from agentloom.inference import base as inf

__all__ = ["Event", "MessageBuilder"]

Event = tuple[str, bytes]  # the event's name, its JSON data
_STOPS: dict[str, a.StopReason] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "refusal",
}


@dataclass
class _Block:
    kind: Literal["text", "thinking", "tool_use"]
    index: int
    text: str = ""  # the text, the thinking, or the tool call's arguments so far
    tool_id: str = ""
    name: str = ""
    call: int = -1  # the backend's index of the tool call
    extra: dict[str, Any] = field(default_factory=dict)

    def start(self) -> dict[str, Any]:
        if self.kind == "text":
            return {"type": "text", "text": ""}
        if self.kind == "thinking":
            return {"type": "thinking", "thinking": "", "signature": ""}
        return {"type": "tool_use", "id": self.tool_id, "name": self.name, "input": {}}

    def output(self) -> a.OutputBlock:
        if self.kind == "text":
            return a.TextOut(text=self.text)
        if self.kind == "thinking":
            return a.ThinkingOut(thinking=self.text)
        return a.ToolUseOut(id=self.tool_id, name=self.name, input=_arguments(self.text))


class MessageBuilder:
    """One answer, its blocks built from the chunks as they come."""

    Ended = Callable[[inf.Usage | None], None]

    def __init__(self, model: str, *, thinking: bool, on_end: Ended) -> None:
        """``thinking``: reasoning is given back (as thinking blocks); ``on_end``: told the
        usage once the answer ended (or failed)."""
        self.id = new_id("msg")
        self._model = model
        self._thinking = thinking
        self._on_end: MessageBuilder.Ended | None = on_end
        self._blocks: list[_Block] = []
        self._open: _Block | None = None
        self._stop: a.StopReason | None = None
        self.usage: inf.Usage | None = None

    def take(self, chunk: inf.Chunk) -> list[Event]:
        """Add one chunk; the events that tell it."""
        if isinstance(chunk, inf.TextDelta | inf.RefusalDelta):
            if isinstance(chunk, inf.RefusalDelta):
                self._stop = "refusal"
            return self._append("text", chunk.text, "text_delta", "text")
        if isinstance(chunk, inf.ReasoningDelta):
            if not self._thinking:
                return []
            return self._append("thinking", chunk.text, "thinking_delta", "thinking")
        if isinstance(chunk, inf.ToolCallDelta):
            return self._tool(chunk)
        if isinstance(chunk, inf.Finish):
            self._stop = self._stop if self._stop == "refusal" else _STOPS[chunk.reason]
        elif isinstance(chunk, inf.Usage):
            self.usage = chunk
        return []

    def message(self) -> a.Message:
        self.ended()
        return a.Message(
            id=self.id,
            content=[block.output() for block in self._blocks],
            model=self._model,
            stop_reason=self._stop or "end_turn",
            usage=self._usage(),
        )

    def ended(self) -> None:
        """Tell the usage, once."""
        if self._on_end is not None:
            told, self._on_end = self._on_end, None
            told(self.usage)

    async def events(self, chunks: AsyncIterator[inf.Chunk]) -> AsyncGenerator[Event, None]:
        start: dict[str, Any] = {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": self._model,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
        yield _event("message_start", message=start)
        yield _event("ping")
        try:  # a failure is the edge's to tell (an ``error`` event: server/sse.py)
            async with aclosing(chunks):  # type: ignore[type-var]
                async for chunk in chunks:
                    for event in self.take(chunk):
                        yield event
        finally:
            self.ended()
        for event in self._close():
            yield event
        usage = self._usage().model_dump()
        delta = {"stop_reason": self._stop or "end_turn", "stop_sequence": None}
        yield _event("message_delta", delta=delta, usage=usage)
        yield _event("message_stop")

    def _append(
        self, kind: Literal["text", "thinking"], text: str, delta: str, key: str
    ) -> list[Event]:
        events = [] if self._open is not None and self._open.kind == kind else self._switch(kind)
        assert self._open is not None
        self._open.text += text
        body = {"type": delta, key: text}
        events.append(_event("content_block_delta", index=self._open.index, delta=body))
        return events

    def _tool(self, chunk: inf.ToolCallDelta) -> list[Event]:
        events: list[Event] = []
        block = self._open
        if block is None or block.kind != "tool_use" or block.call != chunk.index:
            events = self._switch("tool_use", chunk)
            block = self._open
        assert block is not None
        if chunk.arguments:
            block.text += chunk.arguments
            body = {"type": "input_json_delta", "partial_json": chunk.arguments}
            events.append(_event("content_block_delta", index=block.index, delta=body))
        return events

    def _switch(
        self, kind: Literal["text", "thinking", "tool_use"], call: inf.ToolCallDelta | None = None
    ) -> list[Event]:
        events = self._close()
        block = _Block(kind, len(self._blocks))
        if call is not None:
            block.call, block.name = call.index, call.name or ""
            block.tool_id = call.id or new_id("toolu")
        self._blocks.append(block)
        self._open = block
        events.append(_event("content_block_start", index=block.index, content_block=block.start()))
        return events

    def _close(self) -> list[Event]:
        if self._open is None:
            return []
        index, self._open = self._open.index, None
        return [_event("content_block_stop", index=index)]

    def _usage(self) -> a.Usage:
        usage = self.usage or inf.Usage()
        return a.Usage(
            input_tokens=max(0, usage.input_tokens - usage.cached_tokens),
            output_tokens=usage.output_tokens,
            cache_read_input_tokens=usage.cached_tokens,
        )


def _event(name: str, **body: Any) -> Event:
    return name, json_codec.dumps({"type": name, **body})


def _arguments(text: str) -> dict[str, Any]:
    """A tool call's arguments as its input (an object); what is not one is kept under
    ``arguments``, so that the client sees what the model wrote."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {"arguments": text}
    return value if isinstance(value, dict) else {"arguments": value}
