"""The agent loop's spans: in OpenTelemetry's GenAI semantic conventions (with tracing on),
and as entries of the response's own :class:`~agentloom.timeline.Timeline` (always).

- ``invoke_agent {model}``: a response's whole run (``gen_ai.operation.name = invoke_agent``,
  the response and conversation ids, the usage at the end);
- ``chat {model}``: each model call (``CLIENT``; the served model, the provider, the finish
  reason and token usage), recorded when the call ends (:class:`ModelCall`);
- ``execute_tool {name}``: each server tool call (``gen_ai.tool.name``, its type and call id).

With tracing off, no span is made; the timeline's entries are recorded either way, and
:func:`run_trace` encodes them for the response's final write.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import TYPE_CHECKING, TypeVar

from agentloom.api import events as ev
from agentloom.api.items import (
    CodeInterpreterCall,
    FileSearchCall,
    McpCall,
    OutputItem,
    WebSearchCall,
)
from agentloom.api.response import Response
from agentloom.engine.turn import TurnResult
from agentloom.inference import base as inf
from agentloom.request_entry import current_entry
from agentloom.timeline import Attributes as EntryAttributes
from agentloom.timeline import Entry, Timeline, milliseconds
from agentloom.tracing import Attributes, active

if TYPE_CHECKING:
    from opentelemetry.util.types import AttributeValue

__all__ = [
    "ModelCall",
    "agent_run",
    "compacted",
    "run_trace",
    "tool_call",
    "tool_outcome",
    "usage_attributes",
]

T = TypeVar("T")


def agent_run(
    events: AsyncGenerator[T, None], response: Callable[[], Response], timeline: Timeline
) -> AsyncGenerator[T, None]:
    """The run's ``invoke_agent`` span; ``timeline`` learns the trace it is part of."""
    tracing = active()
    if tracing is None:
        return events
    ids = tracing.ids()
    if ids is not None:
        timeline.trace_id = ids[0]
    first = response()
    attributes: dict[str, str] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "agentloom",
        "gen_ai.request.model": first.model,
        "gen_ai.response.id": first.id,
    }
    if first.conversation is not None:
        attributes["gen_ai.conversation.id"] = first.conversation.id
    name = f"invoke_agent {first.model}"
    return tracing.steps(events, name, attributes, ended=lambda: _ended(response()))


def run_trace(timeline: Timeline, response: Response) -> str:
    """The timeline as stored with ``response``, its run ending now."""
    attributes: EntryAttributes = {"status": response.status, "model": response.model}
    if response.usage is not None:
        attributes["input_tokens"] = response.usage.input_tokens
        attributes["output_tokens"] = response.usage.output_tokens
    error = None if response.error is None else response.error.code
    name = f"invoke_agent {response.model}"
    run = Entry(name, "response", timeline.started, time.perf_counter(), attributes, error)
    return timeline.encode(run)


class ModelCall:
    """One model call under way: its ``chat {model}`` span and timeline entry are recorded
    when it ends (it starts no span of its own, so none needs to be current while it
    streams). :attr:`first_output`: when its first event came (``perf_counter``), if it did."""

    __slots__ = ("first_output", "model", "provider", "started", "started_ns", "timeline")

    def __init__(self, model: str, provider: str, timeline: Timeline) -> None:
        """``model``: the served id; ``provider``: the provider's name in the configuration."""
        self.model = model
        self.provider = provider
        self.timeline = timeline
        self.first_output = 0.0
        self.started = time.perf_counter()
        self.started_ns = time.time_ns()

    def record(self, result: TurnResult, error: Exception | None = None) -> None:
        failed = None if error is None else type(error).__qualname__
        entry = current_entry()
        if entry is not None:  # the request log's row: who served it, its first token
            entry.deployment = self.provider
            if self.first_output:
                entry.first_output(self.first_output)
        name = f"chat {self.model}"
        self.timeline.add(name, "model_call", self.started, self._entry(result), failed)
        tracing = active()
        if tracing is None:
            return
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": self.provider,
            "gen_ai.request.model": self.model,
            **usage_attributes(result.usage),
            **_finish(result),
        }
        if error is not None:
            attributes["error.type"] = type(error).__qualname__
        kind = tracing.kind.CLIENT
        tracing.record(name, self.started_ns, attributes, kind=kind, failed=error)

    def _entry(self, result: TurnResult) -> EntryAttributes:
        attributes: EntryAttributes = {"provider": self.provider, "model": self.model}
        if result.finish is not None:
            attributes["finish_reason"] = result.finish
        usage = result.usage
        if usage is not None:
            attributes["input_tokens"] = usage.input_tokens
            attributes["output_tokens"] = usage.output_tokens
            if usage.cached_tokens:
                attributes["cached_tokens"] = usage.cached_tokens
            if usage.reasoning_tokens:
                attributes["reasoning_tokens"] = usage.reasoning_tokens
        if self.first_output:
            first = milliseconds(self.first_output - self.started)
            attributes["time_to_first_token_ms"] = first
        return attributes


def tool_call(
    events: AsyncGenerator[ev.StreamEvent, None],
    name: str,
    kind: str,
    call_id: str,
    timeline: Timeline,
) -> AsyncIterator[ev.StreamEvent]:
    """A server tool call's events: its ``execute_tool`` span and timeline entry."""
    timed = _timed_tool(events, timeline, name, {"tool_type": kind, "call_id": call_id})
    tracing = active()
    if tracing is None:
        return timed
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.type": kind,
        "gen_ai.tool.call.id": call_id,
    }
    return tracing.steps(timed, f"execute_tool {name}", attributes)


async def _timed_tool(
    events: AsyncGenerator[ev.StreamEvent, None],
    timeline: Timeline,
    name: str,
    attributes: EntryAttributes,
) -> AsyncGenerator[ev.StreamEvent, None]:
    """``events``, and the call's entry when they end: its outcome is its item's (the last
    ``output_item.done``), ``failed`` an error."""
    started, error = time.perf_counter(), None
    try:
        async for event in events:
            if isinstance(event, ev.OutputItemDone):
                attributes["outcome"] = tool_outcome(event.item)
            yield event
    except GeneratorExit:
        error = "cancelled"  # the consumer went away: the call was cut short
        raise
    except BaseException as exc:
        error = type(exc).__qualname__
        raise
    finally:
        await events.aclose()
        if error is None and attributes.get("outcome") == "failed":
            error = "failed"
        timeline.add(f"execute_tool {name}", "tool_call", started, attributes, error)


def compacted(timeline: Timeline, started: float, model: str, usage: inf.Usage | None) -> None:
    """A compaction's summary, asked of ``model`` from ``started`` until now."""
    attributes: EntryAttributes = {"model": model}
    if usage is not None:
        attributes["input_tokens"] = usage.input_tokens
        attributes["output_tokens"] = usage.output_tokens
    timeline.add(f"compaction {model}", "compaction", started, attributes)


_STATUSED = (FileSearchCall, CodeInterpreterCall, WebSearchCall, McpCall)


def tool_outcome(item: OutputItem) -> str:
    """A server tool call's outcome: its item's status (``completed``, ``failed``,
    ``incomplete`` ...), ``completed`` for an item that has none."""
    if isinstance(item, _STATUSED) and item.status is not None:
        return str(item.status)
    return "completed"


def usage_attributes(usage: inf.Usage | None) -> Attributes:
    if usage is None:
        return {}
    attributes: dict[str, int] = {
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
    }
    if usage.cached_tokens:
        attributes["gen_ai.usage.cache_read.input_tokens"] = usage.cached_tokens
    if usage.reasoning_tokens:
        attributes["gen_ai.usage.reasoning.output_tokens"] = usage.reasoning_tokens
    return attributes


def _finish(result: TurnResult) -> Attributes:
    if result.finish is None:
        return {}
    return {"gen_ai.response.finish_reasons": [result.finish]}


def _ended(response: Response) -> Attributes:
    attributes: dict[str, str | int] = {"agentloom.response.status": response.status}
    usage = response.usage
    if usage is not None:
        attributes["gen_ai.usage.input_tokens"] = usage.input_tokens
        attributes["gen_ai.usage.output_tokens"] = usage.output_tokens
    if response.error is not None:
        attributes["error.type"] = response.error.code
    return attributes
