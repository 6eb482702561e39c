"""Telemetry: an ``LLMCall`` on the bus for every call (ok or by error category), and
OpenTelemetry spans in the GenAI semantic conventions."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from agentloom.bus import EventBus
from agentloom.errors import (
    ContextLengthExceededError,
    UpstreamError,
    UpstreamRateLimitError,
    UpstreamRequestError,
    UpstreamTimeoutError,
)
from agentloom.inference.scripted import ScriptedModel, delay, raise_error, tool_call, usage
from agentloom.llm import LLM, CallOptions, LLMCall, Message, TextDeltaEvent
from tests.llm.conftest import MakeLLM

# --- the bus ---------------------------------------------------------------------------------


async def test_a_call_is_reported_on_the_bus(bus: EventBus, calls: list[LLMCall]) -> None:
    llm = LLM("local", provider=ScriptedModel([["Hi!", usage(10, 2)]]), bus=bus)

    reply = await llm.chat([Message.user("Hi")])

    (call,) = calls
    assert call.ok
    assert (call.path, call.model, call.error) == ("completions", "local", None)
    assert call.metrics == reply.metrics
    assert call.latency_ms > 0


async def test_a_responses_call_is_reported_on_the_bus(
    server_llm: MakeLLM, scripted: ScriptedModel, calls: list[LLMCall]
) -> None:
    scripted.add_turn("Hi!", usage(10, 2, cached_tokens=4))
    llm = server_llm()

    await llm.chat([Message.user("Hi")])

    (call,) = calls
    assert call.ok
    assert call.path == "responses"
    assert call.metrics is not None
    assert (call.metrics.input_tokens, call.metrics.cached_tokens) == (10, 4)


@pytest.mark.parametrize(
    ("error", "category"),
    [
        (UpstreamRateLimitError("slow", status=429), "rate_limit"),
        (UpstreamTimeoutError("late"), "timeout"),
        (ContextLengthExceededError("long", status=400), "context_length"),
        (UpstreamRequestError("bad", status=400), "invalid_request"),
        (UpstreamError("boom", status=500), "upstream"),
    ],
)
async def test_a_failed_call_is_reported_with_its_category(
    bus: EventBus, calls: list[LLMCall], error: UpstreamError, category: str
) -> None:
    llm = LLM("local", provider=ScriptedModel([[raise_error(error)]]), bus=bus)

    with pytest.raises(type(error)):
        await llm.chat([Message.user("Hi")])

    (call,) = calls
    assert not call.ok
    assert call.metrics is None
    assert call.error == category
    assert call.error_message is not None
    assert error.message in call.error_message


async def test_a_failed_responses_call_is_reported(
    server_llm: MakeLLM, scripted: ScriptedModel, calls: list[LLMCall]
) -> None:
    scripted.add_turn(raise_error(UpstreamRateLimitError("slow", status=429)))
    llm = server_llm()

    with pytest.raises(UpstreamRateLimitError):
        await llm.chat([Message.user("Hi")])

    assert [(c.path, c.error) for c in calls] == [("responses", "rate_limit")]


async def test_a_cancelled_call_is_reported(bus: EventBus, calls: list[LLMCall]) -> None:
    llm = LLM("local", provider=ScriptedModel([["Hel", delay(60), "lo"]]), bus=bus)
    started = asyncio.Event()

    async def consume() -> None:
        async for event in llm.stream([Message.user("Hi")]):
            if isinstance(event, TextDeltaEvent):
                started.set()

    task = asyncio.create_task(consume())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert [c.error for c in calls] == ["cancelled"]


# --- OpenTelemetry ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def exporter() -> Iterator[InMemorySpanExporter]:
    """Spans of every tracer made from the global provider (set here, if nobody set one)."""
    memory = InMemorySpanExporter()
    current = trace.get_tracer_provider()
    provider = current if isinstance(current, TracerProvider) else TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    if provider is not current:
        trace.set_tracer_provider(provider)
    yield memory
    memory.shutdown()


@pytest.fixture
def spans(exporter: InMemorySpanExporter) -> Iterator[InMemorySpanExporter]:
    exporter.clear()
    yield exporter
    exporter.clear()


def tracer() -> trace.Tracer:
    return trace.get_tracer_provider().get_tracer("tests")


def only_span(spans: InMemorySpanExporter) -> ReadableSpan:
    (span,) = spans.get_finished_spans()
    return span


async def test_a_span_per_completions_call(spans: InMemorySpanExporter) -> None:
    model = ScriptedModel([[tool_call("f", {}), usage(12, 3, cached_tokens=5, reasoning_tokens=1)]])
    llm = LLM("local", provider=model, tracer=tracer(), bus=EventBus())
    options = CallOptions(temperature=0.5, max_output_tokens=100)

    await llm.chat([Message.user("Hi")], options=options)

    span = only_span(spans)
    assert span.name == "chat local"
    assert span.kind == trace.SpanKind.CLIENT
    attributes = dict(span.attributes or {})
    first_chunk = attributes.pop("gen_ai.response.time_to_first_chunk")
    assert isinstance(first_chunk, float)
    assert attributes == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "local",
        "gen_ai.request.stream": True,
        "gen_ai.request.temperature": 0.5,
        "gen_ai.request.max_tokens": 100,
        "agentloom.llm.path": "completions",
        "gen_ai.response.finish_reasons": ("tool_calls",),
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 3,
        "gen_ai.usage.cache_read.input_tokens": 5,
        "gen_ai.usage.reasoning.output_tokens": 1,
    }
    assert span.status.status_code == StatusCode.UNSET


async def test_a_span_per_responses_call(
    server_llm: MakeLLM, scripted: ScriptedModel, spans: InMemorySpanExporter
) -> None:
    scripted.add_turn("Hi!")
    llm = server_llm(tracer=tracer())

    reply = await llm.chat([Message.user("Hi")])

    attributes = only_span(spans).attributes or {}
    assert attributes["agentloom.llm.path"] == "responses"
    assert attributes["gen_ai.response.id"] == reply.response_id
    assert attributes["gen_ai.response.model"] == reply.model
    assert attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert (attributes["server.address"], attributes["server.port"]) == ("agentloom.test", 80)


async def test_a_failed_call_is_an_error_span(spans: InMemorySpanExporter) -> None:
    error = UpstreamRateLimitError("slow", status=429)
    llm = LLM("local", provider=ScriptedModel([[raise_error(error)]]), tracer=tracer())

    with pytest.raises(UpstreamRateLimitError):
        await llm.chat([Message.user("Hi")])

    span = only_span(spans)
    assert (span.attributes or {})["error.type"] == "UpstreamRateLimitError"
    assert span.status.status_code == StatusCode.ERROR
    assert "slow" in (span.status.description or "")


async def test_otel_telemetry_uses_the_global_tracer_provider(
    spans: InMemorySpanExporter,
) -> None:
    llm = LLM("local", provider=ScriptedModel(["Hi!"]), telemetry="otel", bus=EventBus())

    await llm.chat([Message.user("Hi")])

    assert only_span(spans).name == "chat local"


async def test_no_tracer_no_spans(spans: InMemorySpanExporter) -> None:
    llm = LLM("local", provider=ScriptedModel(["Hi!"]), bus=EventBus())

    await llm.chat([Message.user("Hi")])

    assert spans.get_finished_spans() == ()
