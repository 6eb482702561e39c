"""One model call: provider chunks in, output items and their stream events out.

The streamer opens and closes output items as the chunks demand (reasoning, then a message with
text or refusal parts, then function calls), numbers the events, and keeps the finished items,
the finish reason and the usage for the loop to decide what comes next.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentloom.api import events as ev
from agentloom.api.content import (
    Annotation,
    Logprob,
    OutputText,
    ReasoningText,
    Refusal,
    TopLogprob,
)
from agentloom.api.items import OutputItem, OutputMessage, Reasoning
from agentloom.engine.client_calls import ClientCall, OpenCall
from agentloom.engine.client_tools import ClientTool
from agentloom.engine.reasoning import ReasoningOutput, summary_events
from agentloom.frozen import frozen
from agentloom.ids import new_id
from agentloom.inference import base as inf


class Sequencer:
    """Hands out ``sequence_number`` values: 0, 1, 2 ... across a whole response."""

    def __init__(self) -> None:
        self._next = 0

    def __call__(self) -> int:
        value = self._next
        self._next += 1
        return value


@dataclass
class _Part:
    kind: str  # "output_text" | "refusal"
    chunks: list[str] = field(default_factory=list)
    logprobs: list[Logprob] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)
    done: OutputText | Refusal | None = None  # the part as closed (its done event's)

    def model(self, *, with_logprobs: bool) -> OutputText | Refusal:
        if self.done is not None:
            return self.done
        text = "".join(self.chunks)
        if self.kind == "refusal":
            return Refusal(refusal=text)
        return OutputText(
            text=text,
            annotations=self.annotations,
            logprobs=self.logprobs if with_logprobs else [],
        )


@dataclass
class _OpenMessage:
    id: str
    index: int
    parts: list[_Part] = field(default_factory=list)


@dataclass
class _OpenReasoning:
    id: str
    index: int
    chunks: list[str] = field(default_factory=list)


@dataclass
class TurnResult:
    items: list[OutputItem] = field(default_factory=list)
    calls: list[ClientCall] = field(default_factory=list)  # calls of the client's tools
    hosted: list[inf.ToolCall] = field(default_factory=list)  # calls of server tools, to run
    rejected: list[inf.ToolCall] = field(default_factory=list)
    finish: inf.FinishReason | None = None
    usage: inf.Usage | None = None
    output_chars: int = 0


@frozen
class CallPolicy:
    """Which tool calls of the model are accepted and handed on."""

    offered: frozenset[str]
    single_call: bool = False  # parallel_tool_calls: false
    required: bool = False  # tool_choice required / a named function: a turn must call a tool
    hosted: frozenset[str] = frozenset()  # names of server tools: their calls are run, not streamed
    client: Mapping[str, ClientTool] = field(default_factory=dict)  # the client's, by chat name


class TurnStreamer:
    def __init__(
        self,
        seq: Callable[[], int],
        *,
        first_output_index: int,
        policy: CallPolicy,
        include_logprobs: bool = False,
        annotate: Callable[[str], list[Annotation]] | None = None,
        reasoning: ReasoningOutput | None = None,
        quiet: bool = False,
    ) -> None:
        """``quiet``: no one sees the events of messages and reasoning (a collected reply):
        their items are made, their events are not (only a function call's are)."""
        self._seq = seq
        self._quiet = quiet
        self._reasoning_output = reasoning or ReasoningOutput()
        self._annotate = annotate
        self._next_index = first_output_index
        self._policy = policy
        self._with_logprobs = include_logprobs
        self._message: _OpenMessage | None = None
        self._reasoning: _OpenReasoning | None = None
        self._calls: dict[int, OpenCall] = {}
        self._pending: dict[int, inf.ToolCallDelta] = {}
        self._skipped: dict[int, list[str]] = {}
        self._skipped_names: dict[int, tuple[str, str]] = {}
        self._hosted: dict[int, tuple[str, str, list[str]]] = {}
        self._refusal_only = False
        self.opened = False  # an output item was opened (its first event, when not quiet)
        self.first_delta = False  # text, a refusal, reasoning or arguments came
        self.result = TurnResult()

    async def run(self, chunks: AsyncIterator[inf.Chunk]) -> AsyncIterator[ev.StreamEvent]:
        async for chunk in chunks:
            for event in self.on_chunk(chunk):
                yield event
        for event in self.close():
            yield event

    def close(self) -> list[ev.StreamEvent]:
        """Close every open item (also used when the stream ends early)."""
        events = self._close_reasoning() + self._close_message() + self._close_calls()
        self.result.rejected.extend(
            inf.ToolCall(id=call_id, name=name, arguments="".join(self._skipped[i]))
            for i, (call_id, name) in self._skipped_names.items()
        )
        self._skipped_names.clear()
        self.result.hosted.extend(
            inf.ToolCall(id=call_id, name=name, arguments="".join(chunks))
            for call_id, name, chunks in self._hosted.values()
        )
        self._hosted.clear()
        return events

    def keep_refusal_only(self) -> None:
        """A guardrail replaced the answer: the open message keeps only its refusal parts (the
        text released before is dropped from the finished item)."""
        self._refusal_only = True

    # --- chunk dispatch ----------------------------------------------------------------------

    def on_chunk(self, chunk: inf.Chunk) -> list[ev.StreamEvent]:
        """The events one chunk makes (:meth:`close` makes the last ones)."""
        if isinstance(chunk, inf.TextDelta):
            return self._on_text(chunk)
        if isinstance(chunk, inf.ReasoningDelta):
            return self._on_reasoning(chunk)
        if isinstance(chunk, inf.ToolCallDelta):
            return self._on_tool_call(chunk)
        if isinstance(chunk, inf.RefusalDelta):
            return self._on_refusal(chunk)
        if isinstance(chunk, inf.Finish):
            self.result.finish = chunk.reason
        else:
            self.result.usage = chunk
        return []

    def _take_index(self) -> int:
        self.opened = True
        index = self._next_index
        self._next_index += 1
        return index

    # --- reasoning ---------------------------------------------------------------------------

    def _on_reasoning(self, chunk: inf.ReasoningDelta) -> list[ev.StreamEvent]:
        events: list[ev.StreamEvent] = []
        if self._reasoning is None:
            events += self._close_message() + self._close_calls()
            events += self._open_reasoning()
        assert self._reasoning is not None
        self._reasoning.chunks.append(chunk.text)
        self.result.output_chars += len(chunk.text)
        self.first_delta = True
        if self._quiet:
            return events
        events.append(
            ev.ReasoningTextDelta(
                sequence_number=self._seq(),
                item_id=self._reasoning.id,
                output_index=self._reasoning.index,
                content_index=0,
                delta=chunk.text,
            )
        )
        return events

    def _open_reasoning(self) -> list[ev.StreamEvent]:
        item = _OpenReasoning(id=new_id("rs"), index=self._take_index())
        self._reasoning = item
        if self._quiet:
            return []
        added = Reasoning(id=item.id, summary=[], content=[], status="in_progress")
        return [
            ev.OutputItemAdded(sequence_number=self._seq(), output_index=item.index, item=added),
            ev.ContentPartAdded(
                sequence_number=self._seq(),
                item_id=item.id,
                output_index=item.index,
                content_index=0,
                part=ReasoningText(text=""),
            ),
        ]

    def _close_reasoning(self) -> list[ev.StreamEvent]:
        item, self._reasoning = self._reasoning, None
        if item is None:
            return []
        text = "".join(item.chunks)
        done = self._reasoning_output.item(item.id, text)  # sealed and summarised as asked
        self.result.items.append(done)
        if self._quiet:
            return []
        where = {"item_id": item.id, "output_index": item.index, "content_index": 0}
        return [
            ev.ReasoningTextDone(sequence_number=self._seq(), text=text, **where),
            ev.ContentPartDone(sequence_number=self._seq(), part=ReasoningText(text=text), **where),
            *summary_events(self._seq, done, item.index),
            ev.OutputItemDone(sequence_number=self._seq(), output_index=item.index, item=done),
        ]

    # --- message -----------------------------------------------------------------------------

    def _ensure_part(self, kind: str) -> tuple[_OpenMessage, _Part, list[ev.StreamEvent]]:
        events: list[ev.StreamEvent] = []
        if self._message is None:
            events += self._close_reasoning() + self._close_calls()
            self._message = _OpenMessage(id=new_id("msg"), index=self._take_index())
            if not self._quiet:
                added = OutputMessage(id=self._message.id, status="in_progress", content=[])
                events.append(
                    ev.OutputItemAdded(
                        sequence_number=self._seq(), output_index=self._message.index, item=added
                    )
                )
        message = self._message
        if not message.parts or message.parts[-1].kind != kind:
            if message.parts:
                events += self._close_part(message)
            message.parts.append(_Part(kind=kind))
            if self._quiet:
                return message, message.parts[-1], events
            events.append(
                ev.ContentPartAdded(
                    sequence_number=self._seq(),
                    item_id=message.id,
                    output_index=message.index,
                    content_index=len(message.parts) - 1,
                    part=_Part(kind=kind).model(with_logprobs=self._with_logprobs),
                )
            )
        return message, message.parts[-1], events

    def _on_text(self, chunk: inf.TextDelta) -> list[ev.StreamEvent]:
        message, part, events = self._ensure_part("output_text")
        part.chunks.append(chunk.text)
        logprobs = [_logprob(lp) for lp in chunk.logprobs]
        part.logprobs.extend(logprobs)
        self.result.output_chars += len(chunk.text)
        self.first_delta = True
        if self._quiet:
            return events
        events.append(
            ev.OutputTextDelta(
                sequence_number=self._seq(),
                item_id=message.id,
                output_index=message.index,
                content_index=len(message.parts) - 1,
                delta=chunk.text,
                logprobs=logprobs,
            )
        )
        return events

    def _on_refusal(self, chunk: inf.RefusalDelta) -> list[ev.StreamEvent]:
        message, part, events = self._ensure_part("refusal")
        part.chunks.append(chunk.text)
        self.result.output_chars += len(chunk.text)
        self.first_delta = True
        if self._quiet:
            return events
        events.append(
            ev.RefusalDelta(
                sequence_number=self._seq(),
                item_id=message.id,
                output_index=message.index,
                content_index=len(message.parts) - 1,
                delta=chunk.text,
            )
        )
        return events

    def _close_part(self, message: _OpenMessage) -> list[ev.StreamEvent]:
        part = message.parts[-1]
        where = {
            "item_id": message.id,
            "output_index": message.index,
            "content_index": len(message.parts) - 1,
        }
        events = self._annotations(part, where)
        model = part.done = part.model(with_logprobs=self._with_logprobs)
        if self._quiet:
            return events
        done: ev.StreamEvent
        if isinstance(model, Refusal):
            done = ev.RefusalDone(sequence_number=self._seq(), refusal=model.refusal, **where)
        else:
            done = ev.OutputTextDone(
                sequence_number=self._seq(), text=model.text, logprobs=part.logprobs, **where
            )
        return [*events, done, ev.ContentPartDone(sequence_number=self._seq(), part=model, **where)]

    def _annotations(self, part: _Part, where: dict[str, Any]) -> list[ev.StreamEvent]:
        """Citations of the finished text (file_search), announced before its ``done``."""
        if self._annotate is None or part.kind != "output_text":
            return []
        part.annotations = self._annotate("".join(part.chunks))
        return [
            ev.OutputTextAnnotationAdded(
                sequence_number=self._seq(), annotation_index=i, annotation=annotation, **where
            )
            for i, annotation in enumerate(part.annotations)
        ]

    def _close_message(self) -> list[ev.StreamEvent]:
        message, self._message = self._message, None
        if message is None:
            return []
        events = self._close_part(message) if message.parts else []
        parts = [p for p in message.parts if p.kind == "refusal" or not self._refusal_only]
        content = [p.model(with_logprobs=self._with_logprobs) for p in parts]
        done = OutputMessage(id=message.id, status="completed", content=content)
        self.result.items.append(done)
        if self._quiet:
            return events
        events.append(
            ev.OutputItemDone(sequence_number=self._seq(), output_index=message.index, item=done)
        )
        return events

    # --- function calls ----------------------------------------------------------------------

    def _on_tool_call(self, chunk: inf.ToolCallDelta) -> list[ev.StreamEvent]:
        if chunk.index in self._skipped:
            self._skipped[chunk.index].append(chunk.arguments)
            return []
        if chunk.index in self._hosted:
            self._hosted[chunk.index][2].append(chunk.arguments)
            return []
        call = self._calls.get(chunk.index)
        if call is None:
            return self._start_call(chunk)
        return self._call_delta(call, chunk.arguments)

    def _start_call(self, chunk: inf.ToolCallDelta) -> list[ev.StreamEvent]:
        pending = self._merge_pending(chunk)
        if pending.name is None:
            self._pending[chunk.index] = pending  # name not known yet: wait for it
            return []
        self._pending.pop(chunk.index, None)
        call_id = pending.id or new_id("call")
        if pending.name not in self._policy.offered:
            self._skipped[chunk.index] = [pending.arguments]
            self._skipped_names[chunk.index] = (call_id, pending.name)  # reported to the model
            return []
        if self._policy.single_call and (self._calls or self.result.calls or self._hosted):
            self._skipped[chunk.index] = []  # parallel_tool_calls: false, dropped
            return []
        if pending.name in self._policy.hosted:
            self._hosted[chunk.index] = (call_id, pending.name, [pending.arguments])
            return []  # run by the server: its item is streamed when it runs
        events = self._close_reasoning() + self._close_message()
        call = self._open_call(call_id, pending.name)
        self._calls[chunk.index] = call
        added = call.item("in_progress")
        events.append(
            ev.OutputItemAdded(sequence_number=self._seq(), output_index=call.index, item=added)
        )
        return events + self._call_delta(call, pending.arguments)

    def _open_call(self, call_id: str, chat_name: str) -> OpenCall:
        """A call of the client's tool offered as ``chat_name``."""
        tool = self._policy.client.get(chat_name) or ClientTool.plain(chat_name)
        return OpenCall.open(tool, call_id=call_id, index=self._take_index())

    def _merge_pending(self, chunk: inf.ToolCallDelta) -> inf.ToolCallDelta:
        earlier = self._pending.get(chunk.index)
        if earlier is None:
            return chunk
        return inf.ToolCallDelta(
            index=chunk.index,
            id=earlier.id or chunk.id,
            name=earlier.name or chunk.name,
            arguments=earlier.arguments + chunk.arguments,
        )

    def _call_delta(self, call: OpenCall, delta: str) -> list[ev.StreamEvent]:
        if not delta:
            return []
        self.result.output_chars += len(delta)
        self.first_delta = True
        return call.delta(self._seq, delta)

    def _close_calls(self) -> list[ev.StreamEvent]:
        events: list[ev.StreamEvent] = []
        for call in sorted(self._calls.values(), key=lambda c: c.index):
            done = call.item("completed")
            self.result.items.append(done)
            self.result.calls.append(done)
            events += call.done(self._seq, done)
            events.append(
                ev.OutputItemDone(sequence_number=self._seq(), output_index=call.index, item=done)
            )
        self._calls.clear()
        return events


def _logprob(lp: inf.TokenLogprob) -> Logprob:
    return Logprob(
        token=lp.token,
        logprob=lp.logprob,
        bytes=list(lp.bytes or ()),
        top_logprobs=[
            TopLogprob(token=t.token, logprob=t.logprob, bytes=list(t.bytes or ()))
            for t in lp.top_logprobs
        ],
    )
