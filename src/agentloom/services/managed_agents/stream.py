"""One turn of a managed agent as the frames of its stream, in OpenJarvis's format
(:mod:`agentloom.api.managed_agent_stream`), and the reply it leaves.

The strategy's events become frames as they come: a text delta a chunk, a reasoning delta a
chunk with ``reasoning_content``, each tool call an ``event: tool_calls`` frame as it starts
(one call each: the calls of a turn start together, and a frame is sent when its event comes,
never held back), each tool's end an ``event: tool_result`` frame. The turn ends with a chunk
carrying ``finish_reason: "stop"`` and the usage, then ``[DONE]``; a turn that failed ends with
an error frame, then ``[DONE]``.

The reply (:meth:`TurnStream.reply`) is the strategy's answer and the tool calls it made; a turn
cut short (its client gone, its job stopped) leaves the text streamed so far, ``incomplete``.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass, field

from agentloom.agents.base import (
    AgentEvent,
    AgentFinished,
    AgentInput,
    AgentUsage,
    ReasoningDelta,
    TextDelta,
    ToolFinished,
    ToolStarted,
)
from agentloom.api.errors import ErrorDetail, ErrorEnvelope
from agentloom.api.managed_agent_stream import (
    TOOL_CALLS,
    TOOL_RESULT,
    AgentChunk,
    ChunkChoice,
    ChunkDelta,
    ChunkUsage,
    StreamedFunction,
    StreamedToolCall,
    ToolCallsEvent,
    ToolResultEvent,
)
from agentloom.api.managed_agents import RunError, ToolCallRecord
from agentloom.api.wire import WireModel
from agentloom.errors import AgentloomError, UpstreamError
from agentloom.frozen import frozen
from agentloom.ids import new_id
from agentloom.services.managed_agents.factory import BuiltAgent
from agentloom.storage.managed_agents import MessageRow

__all__ = ["DONE", "Frame", "TurnStream", "turn_frames"]


@frozen
class Frame:
    """One SSE frame: its ``event:`` name (empty: a ``data:`` line only) and its data."""

    event: str
    data: str  # JSON, or [DONE]

    @classmethod
    def of(cls, data: WireModel, event: str = "") -> Frame:
        return cls(event, data.model_dump_json())


DONE = Frame("", "[DONE]")


@dataclass
class TurnStream:
    """The frames of one turn, and what it said and did."""

    model: str
    id: str = field(default_factory=lambda: new_id("chatcmpl", separator="-"))
    created: int = field(default_factory=lambda: int(time.time()))
    text: list[str] = field(default_factory=list)
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    usage: AgentUsage = field(default_factory=AgentUsage)
    answer: str | None = None  # the strategy's answer, once it finished
    stop_reason: str | None = None
    error: RunError | None = None  # why it failed
    tools_used: set[str] = field(default_factory=set)
    _started: dict[str, float] = field(default_factory=dict)

    def frames(self, event: AgentEvent) -> list[Frame]:
        if isinstance(event, TextDelta):
            self.text.append(event.text)
            return [self._chunk(ChunkDelta(content=event.text))]
        if isinstance(event, ReasoningDelta):
            return [self._chunk(ChunkDelta(reasoning_content=event.text))]
        if isinstance(event, ToolStarted):
            return [self._started_call(event)]
        if isinstance(event, ToolFinished):
            return [self._finished_call(event)]
        if isinstance(event, AgentFinished):
            self.answer = event.result.content
            self.usage = event.result.usage
            self.stop_reason = event.result.stop_reason
        return []  # TurnStarted: nothing to send

    def end(self) -> list[Frame]:
        """The last chunk (``finish_reason: "stop"``, the usage), then ``[DONE]``."""
        used = self.usage
        usage = ChunkUsage(
            prompt_tokens=used.input_tokens,
            completion_tokens=used.output_tokens,
            total_tokens=used.total_tokens,
        )
        choice = ChunkChoice(finish_reason="stop")
        last = AgentChunk(
            id=self.id, created=self.created, model=self.model, choices=[choice], usage=usage
        )
        return [Frame.of(last), DONE]

    def failed(self, exc: AgentloomError) -> list[Frame]:
        """The error (as a Chat Completions stream reports one), then ``[DONE]``."""
        self.stop_reason = "error"
        self.error = RunError(code=exc.code or "server_error", message=exc.stated())
        kind = "server_error" if isinstance(exc, UpstreamError) else "invalid_request_error"
        detail = ErrorDetail(message=exc.stated(), type=kind, param=exc.param, code=exc.code)
        return [Frame.of(ErrorEnvelope(error=detail)), DONE]

    def reply(self, agent_id: str, run_id: str | None = None) -> MessageRow | None:
        """The agent's message: its answer, or what it streamed before it was cut short
        (``None`` when it said and did nothing)."""
        finished = self.answer is not None
        content = self.answer if self.answer is not None else "".join(self.text)
        if not content and not self.tool_calls:
            return None
        calls = [call.model_dump(mode="json") for call in self.tool_calls]
        return MessageRow(
            id=new_id("amsg"),
            agent_id=agent_id,
            direction="agent_to_user",
            content=content,
            mode="immediate",
            status="delivered" if finished else "incomplete",
            created_at=time.time(),
            run_id=run_id,
            tool_calls=json.dumps(calls) if calls else None,
            stop_reason=self.stop_reason or "cancelled",
        )

    def _chunk(self, delta: ChunkDelta) -> Frame:
        chunk = AgentChunk(
            id=self.id, created=self.created, model=self.model, choices=[ChunkChoice(delta=delta)]
        )
        return Frame.of(chunk)

    def _started_call(self, event: ToolStarted) -> Frame:
        call = event.call
        self._started[call.call_id] = time.perf_counter()
        self.tools_used.add(call.name)
        function = StreamedFunction(name=call.name, arguments=call.arguments)
        return Frame.of(
            ToolCallsEvent(tool_calls=[StreamedToolCall(id=call.call_id, function=function)]),
            TOOL_CALLS,
        )

    def _finished_call(self, event: ToolFinished) -> Frame:
        outcome = event.outcome
        started = self._started.pop(outcome.call_id, time.perf_counter())
        record = ToolCallRecord(
            id=outcome.call_id,
            tool=outcome.name,
            arguments=outcome.arguments,
            result=outcome.output,
            success=not outcome.is_error,
            latency=round((time.perf_counter() - started) * 1000, 3),
        )
        self.tool_calls.append(record)
        result = ToolResultEvent(
            tool_call_id=record.id,
            tool=record.tool,
            arguments=record.arguments,
            result=record.result,
            success=record.success,
            latency=record.latency,
        )
        return Frame.of(result, TOOL_RESULT)


async def turn_frames(
    built: BuiltAgent, turn: TurnStream, input: AgentInput
) -> AsyncGenerator[Frame, None]:
    """The frames of ``built`` running a turn on ``input``: its events as they come, then its
    end, or its failure (an error a client could cause or the backend's: the stream has begun,
    so it is told in the stream)."""
    try:
        async with aclosing(built.agent.stream(input, built.context)) as events:
            async for event in events:
                for frame in turn.frames(event):
                    yield frame
    except AgentloomError as exc:
        for frame in turn.failed(exc):
            yield frame
        return
    for frame in turn.end():
        yield frame
