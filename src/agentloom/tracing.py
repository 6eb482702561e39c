"""OpenTelemetry traces of the server's work, exported over OTLP/HTTP.

On when the standard ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``)
is set, unless ``OTEL_SDK_DISABLED=true`` or ``OTEL_TRACES_EXPORTER=none``; the SDK's other
variables apply as usual (``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``,
``OTEL_TRACES_SAMPLER``, ``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_BSP_*`` ...). Off, nothing of
the SDK is imported and no span is made: every call site asks :func:`active` first.

What is traced (docs/tracing.md): each HTTP request (a ``SERVER`` span, continuing the caller's
W3C ``traceparent``), a response's agent loop (``invoke_agent``), each model call (``chat``, in
the GenAI semantic conventions), each server tool call (``execute_tool``), guardrail checks,
background jobs, and the database work done for them. Span contexts are passed explicitly or
through the context of the task that does the work; an async generator's steps run with its
span current (:meth:`Tracing.steps`), and the span is never left current between its steps.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Final, TypeVar

from agentloom import __version__

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Span, SpanKind
    from opentelemetry.util.types import AttributeValue

    from agentloom.span_recorder import SpanRecorder

__all__ = ["Attributes", "Leaf", "Tracing", "activate", "active", "enabled_by_environment"]

Attributes = Mapping[str, "AttributeValue"]
T = TypeVar("T")
INSTRUMENTATION: Final = "agentloom.server"
_ENDPOINTS: Final = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")

_active: Tracing | None = None


def active() -> Tracing | None:
    """The server's tracing, or ``None`` when traces are off (then trace nothing)."""
    return _active


def activate(tracing: Tracing | None) -> None:
    """Make ``tracing`` the process's (the app's lifespan: on at start, ``None`` at the end)."""
    global _active
    _active = tracing


def enabled_by_environment(environ: Mapping[str, str] = os.environ) -> bool:
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() == "none":
        return False
    return any(environ.get(name, "").strip() for name in _ENDPOINTS)


class Tracing:
    """Where the server's spans go (:mod:`agentloom.span_recorder`: lean spans, exported by the
    SDK's batch processor); :meth:`shutdown` exports what is left."""

    def __init__(self, recorder: SpanRecorder) -> None:
        from opentelemetry import context, trace
        from opentelemetry.propagators.textmap import DefaultGetter
        from opentelemetry.trace import SpanKind, Status, StatusCode
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        self._recorder = recorder
        self._trace = trace
        self._context = context
        self._propagator = TraceContextTextMapPropagator()
        self._getter = DefaultGetter()
        self._error = Status(StatusCode.ERROR)
        self.kind = SpanKind

    @classmethod
    def from_environment(cls) -> Tracing:
        """Spans batched to the OTLP/HTTP endpoint the ``OTEL_*`` variables name."""
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return cls.exporting(OTLPSpanExporter())

    @classmethod
    def exporting(cls, exporter: SpanExporter) -> Tracing:
        """Spans batched to ``exporter`` (``OTEL_BSP_*``), sampled by ``OTEL_TRACES_SAMPLER``,
        described by ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES``."""
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.sdk.util.instrumentation import InstrumentationScope

        from agentloom.span_recorder import SpanRecorder

        resource = Resource.create()
        if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
            resource = Resource.create({SERVICE_NAME: "agentloom"})
        sampler = TracerProvider(resource=resource).sampler  # the one the variables name
        scope = InstrumentationScope(INSTRUMENTATION, __version__)
        processor = BatchSpanProcessor(exporter)
        return cls(SpanRecorder(processor, resource, scope, sampler))

    def shutdown(self) -> None:
        """Export what is left, then stop."""
        self._recorder.shutdown()

    # --- making spans ----------------------------------------------------------------------

    def start(
        self,
        name: str,
        attributes: Attributes | None = None,
        *,
        kind: SpanKind | None = None,
        parent: Context | None = None,
    ) -> Span:
        """A span started now (ended by the caller), a child of ``parent`` or of the current
        span."""
        return self._recorder.start(name, attributes, kind or self.kind.INTERNAL, parent)

    def record(
        self,
        name: str,
        started_ns: int,
        attributes: Attributes | None = None,
        *,
        kind: SpanKind | None = None,
        failed: BaseException | None = None,
    ) -> None:
        """A span of work that began at ``started_ns`` (``time.time_ns()``) and ends now, a
        child of the current span; ``failed``: why the work failed."""
        kind = kind or self.kind.INTERNAL
        span = self._recorder.start(name, attributes, kind, None, started_ns)
        if failed is not None:
            span.record_exception(failed)
            span.set_status(self._error)
        span.end()

    def leaf(
        self, name: str, attributes: Attributes | None = None, *, kind: SpanKind | None = None
    ) -> Leaf:
        """A span of a block that starts no span of its own (database work, a shield's
        check): cheaper than :meth:`span`, as it is never made current."""
        return Leaf(self, self.start(name, attributes, kind=kind))

    @contextmanager
    def span(
        self, name: str, attributes: Attributes | None = None, *, kind: SpanKind | None = None
    ) -> Iterator[Span]:
        """A span current for the block (in a coroutine: not across a ``yield``), its error
        recorded when the block raises."""
        span = self.start(name, attributes, kind=kind)
        token = self._context.attach(self._trace.set_span_in_context(span))
        try:
            yield span
        except BaseException as exc:
            self.failed(span, exc)
            raise
        finally:
            self._context.detach(token)
            span.end()

    async def steps(
        self,
        events: AsyncIterator[T],
        name: str,
        attributes: Attributes | None = None,
        *,
        kind: SpanKind | None = None,
        ended: Callable[[], Attributes] | None = None,
    ) -> AsyncGenerator[T, None]:
        """``events``, each step run with a span current, from the first step to the last;
        ``ended`` gives the attributes known at the end (usage, status)."""
        context = self._context
        span = self.start(name, attributes, kind=kind)
        current = self._trace.set_span_in_context(span)
        try:
            while True:
                token = context.attach(current)
                try:
                    event = await anext(events)
                except StopAsyncIteration:
                    break
                finally:
                    context.detach(token)
                yield event
        except BaseException as exc:
            self.failed(span, exc)
            raise
        finally:
            try:
                if isinstance(events, AsyncGenerator):
                    await events.aclose()  # a consumer that stopped early stops its work too
            finally:
                if ended is not None:
                    span.set_attributes(ended())
                span.end()

    def failed(self, span: Span, exc: BaseException) -> None:
        if isinstance(exc, GeneratorExit):
            return  # the consumer stopped early: not an error of this span's work
        span.set_attribute("error.type", type(exc).__qualname__)
        span.record_exception(exc)
        span.set_status(self._error)

    # --- across processes ------------------------------------------------------------------

    def incoming(self, headers: Mapping[str, str]) -> Context:
        """The caller's context from a W3C ``traceparent`` (and ``tracestate``) header."""
        return self._propagator.extract(headers, getter=self._getter)

    def traceresponse(self, span: Span) -> str:
        """The W3C ``traceresponse`` header's value for ``span``: ``00-trace-span-flags``."""
        ctx = span.get_span_context()
        return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"

    def ids(self) -> tuple[str, str] | None:
        """The current span's trace and span ids, hex (``None`` outside a recorded span)."""
        ctx = self._trace.get_current_span().get_span_context()
        if not ctx.is_valid:
            return None
        return f"{ctx.trace_id:032x}", f"{ctx.span_id:016x}"


class Leaf:
    """The context manager of :meth:`Tracing.leaf`: the span, its error recorded, ended."""

    __slots__ = ("_span", "_tracing")

    def __init__(self, tracing: Tracing, span: Span) -> None:
        self._tracing = tracing
        self._span = span

    def __enter__(self) -> Span:
        return self._span

    def __exit__(self, kind: object, exc: BaseException | None, traceback: object) -> None:
        if exc is not None:
            self._tracing.failed(self._span, exc)
        self._span.end()
