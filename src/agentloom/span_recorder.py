"""The spans agentloom records: lean spans handed, once ended, to the SDK's batch processor.

The OpenTelemetry SDK's own spans cost tens of microseconds each (a sampler call, attribute
cleaning under a lock, a copy at the end); a stored response makes four. These record the same
data (name, ids, parent, kind, times, attributes, events, status) into a plain object, and
become the SDK's ``ReadableSpan`` only when they end, for its ``BatchSpanProcessor`` and the
OTLP exporter: what reaches the collector is what the SDK would send. Sampling follows the
SDK's configured sampler (``OTEL_TRACES_SAMPLER``) for a span with no local parent (a request,
a job) and the parent's decision for the others, as the SDK's default ``ParentBased`` does.
Attributes are ours (strings, numbers, booleans and lists of them): they are not cleaned.

Imported only with tracing on (:mod:`agentloom.tracing`).
"""

from __future__ import annotations

import random
import time
import traceback
from collections.abc import Mapping

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace.sampling import Decision, Sampler
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import (
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
)
from opentelemetry.util.types import AttributeValue

__all__ = ["RecordedSpan", "SpanRecorder"]

_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
_UNSAMPLED = TraceFlags(TraceFlags.DEFAULT)
_UNSET = Status(StatusCode.UNSET)
_RECORDED = frozenset({Decision.RECORD_AND_SAMPLE})


class SpanRecorder:
    """Makes spans, and hands the ended ones to ``processor``."""

    def __init__(
        self,
        processor: SpanProcessor,
        resource: Resource,
        scope: InstrumentationScope,
        sampler: Sampler,
    ) -> None:
        self.processor = processor
        self.resource = resource
        self.scope = scope
        self._sampler = sampler

    def start(
        self,
        name: str,
        attributes: Mapping[str, AttributeValue] | None,
        kind: SpanKind,
        parent: Context | None,
        start_time: int | None = None,
    ) -> trace.Span:
        """A span started at ``start_time`` (now by default), a child of the span in
        ``parent`` (the current context when ``None``)."""
        above = trace.get_current_span(parent).get_span_context()
        trace_id = above.trace_id if above.is_valid else random.getrandbits(128)
        if above.is_valid and not above.is_remote:
            sampled = above.trace_flags.sampled
        else:  # a root, or a caller's traceparent: the configured sampler decides
            found = self._sampler.should_sample(parent, trace_id, name, kind, attributes)
            sampled = found.decision in _RECORDED
        context = SpanContext(
            trace_id,
            random.getrandbits(64),
            is_remote=False,
            trace_flags=_SAMPLED if sampled else _UNSAMPLED,
            trace_state=above.trace_state,
        )
        if not sampled:
            return NonRecordingSpan(context)
        parent_context = above if above.is_valid else None
        start = start_time if start_time is not None else time.time_ns()
        return RecordedSpan(
            self, name, context, parent_context, kind, dict(attributes or {}), start
        )

    def shutdown(self) -> None:
        self.processor.shutdown()


class RecordedSpan(trace.Span):
    """A span being recorded (``trace.Span``'s interface); a ``ReadableSpan`` once ended."""

    def __init__(
        self,
        recorder: SpanRecorder,
        name: str,
        context: SpanContext,
        parent: SpanContext | None,
        kind: SpanKind,
        attributes: dict[str, AttributeValue],
        start: int,
    ) -> None:
        self._recorder = recorder
        self._name = name
        self._context = context
        self._parent = parent
        self._kind = kind
        self._attributes = attributes
        self._start = start
        self._events: list[Event] = []
        self._status = _UNSET
        self._ended = False

    def get_span_context(self) -> SpanContext:
        return self._context

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        self._attributes[key] = value

    def set_attributes(self, attributes: Mapping[str, AttributeValue]) -> None:
        self._attributes.update(attributes)

    def add_event(
        self,
        name: str,
        attributes: Mapping[str, AttributeValue] | None = None,
        timestamp: int | None = None,
    ) -> None:
        self._events.append(Event(name, attributes, timestamp or time.time_ns()))

    def update_name(self, name: str) -> None:
        self._name = name

    def is_recording(self) -> bool:
        return not self._ended

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        self._status = status if isinstance(status, Status) else Status(status, description)

    def record_exception(
        self,
        exception: BaseException,
        attributes: Mapping[str, AttributeValue] | None = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        details: dict[str, AttributeValue] = {
            "exception.type": type(exception).__qualname__,
            "exception.message": str(exception),
            "exception.stacktrace": "".join(traceback.format_exception(exception)),
            "exception.escaped": str(escaped),
        }
        self.add_event("exception", {**details, **(attributes or {})}, timestamp)

    def end(self, end_time: int | None = None) -> None:
        if self._ended:
            return
        self._ended = True
        recorder = self._recorder
        readable = ReadableSpan(
            self._name,
            context=self._context,
            parent=self._parent,
            resource=recorder.resource,
            attributes=self._attributes,
            events=self._events,
            kind=self._kind,
            status=self._status,
            start_time=self._start,
            end_time=end_time if end_time is not None else time.time_ns(),
            instrumentation_scope=recorder.scope,
        )
        recorder.processor.on_end(readable)

    # the rest of trace.Span's interface, unused here
    def add_link(
        self, context: SpanContext, attributes: Mapping[str, AttributeValue] | None = None
    ) -> None:
        """Links are not recorded."""

    def __repr__(self) -> str:
        return f"RecordedSpan({self._name!r}, {self._context!r})"
