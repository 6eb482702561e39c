"""OpenTelemetry traces, exported over OTLP/HTTP to a collector that decodes what it receives
(protobuf, as a real collector does): the HTTP server span continues the caller's
``traceparent`` and is answered in ``traceresponse``; a response's run, its model calls, its
server tool calls, its guardrail checks, background jobs and database work are its spans."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import httpx2
import openai
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentloom.config import Settings
from agentloom.inference.scripted import ScriptedModel, tool_call
from agentloom.safety.settings import RulesShieldSettings, SafetySettings
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend
from agentloom.testing.serving import serve_async
from agentloom.tracing import Tracing, enabled_by_environment
from tests.plugins.server import BASE_URL, make_settings, running

PARENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_SPAN = "00f067aa0ba902b7"
SERVER, CLIENT = ProtoSpan.SPAN_KIND_SERVER, ProtoSpan.SPAN_KIND_CLIENT


@dataclass
class Collector:
    """An OTLP/HTTP trace receiver: ``POST /v1/traces``, protobuf bodies, spans kept."""

    url: str = ""
    spans: list[ProtoSpan] = field(default_factory=list)
    service_names: set[str] = field(default_factory=set)

    async def receive(self, request: Request) -> Response:
        assert request.headers["content-type"] == "application/x-protobuf"
        export = ExportTraceServiceRequest.FromString(await request.body())
        for resource_spans in export.resource_spans:
            for attribute in resource_spans.resource.attributes:
                if attribute.key == "service.name":
                    self.service_names.add(attribute.value.string_value)
            for scope_spans in resource_spans.scope_spans:
                self.spans.extend(scope_spans.spans)
        return Response(b"", media_type="application/x-protobuf")

    def named(self, prefix: str) -> list[ProtoSpan]:
        return [span for span in self.spans if span.name.startswith(prefix)]

    def one(self, name: str) -> ProtoSpan:
        (found,) = [span for span in self.spans if span.name == name]
        return found


def attributes(span: ProtoSpan) -> dict[str, object]:
    return {kv.key: _value(kv.value) for kv in span.attributes}


def _value(value: AnyValue) -> object:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


@pytest.fixture
async def collector() -> AsyncIterator[Collector]:
    received = Collector()
    app = Starlette(routes=[Route("/v1/traces", received.receive, methods=["POST"])])
    async with serve_async(app, lifespan=False) as url:
        received.url = url.removesuffix("/v1")
        yield received


@asynccontextmanager
async def traced(settings: Settings, collector: Collector) -> AsyncIterator[httpx2.AsyncClient]:
    """A raw client on an app exporting to ``collector``; leaving it flushes the spans."""
    tracing = Tracing.exporting(OTLPSpanExporter(endpoint=f"{collector.url}/v1/traces"))
    async with running(create_app(settings, tracing=tracing)) as application:
        transport = httpx2.ASGITransport(app=application)
        async with httpx2.AsyncClient(transport=transport, base_url=BASE_URL) as raw:
            yield raw


def _hex(raw: bytes) -> str:
    return raw.hex()


async def test_a_response_is_traced_under_the_callers_trace(
    settings: Settings, collector: Collector, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hello!")
    async with traced(settings, collector) as raw:
        reply = await raw.post(
            "/responses",
            json={"model": backend.model, "input": "Hi"},
            headers={"traceparent": f"00-{PARENT_TRACE}-{PARENT_SPAN}-01"},
        )
        assert reply.status_code == 200
        version, trace_id, span_id, flags = reply.headers["traceresponse"].split("-")
        assert (version, trace_id, flags) == ("00", PARENT_TRACE, "01")

    assert collector.service_names == {"agentloom"}
    server = collector.one("POST /v1/responses")
    assert (server.kind, _hex(server.trace_id)) == (SERVER, PARENT_TRACE)
    assert (_hex(server.parent_span_id), _hex(server.span_id)) == (PARENT_SPAN, span_id)
    server_attributes = attributes(server)
    assert server_attributes["http.response.status_code"] == 200
    assert server_attributes["http.route"] == "/v1/responses"
    agent = collector.one(f"invoke_agent {backend.model}")
    assert agent.parent_span_id == server.span_id
    agent_attributes = attributes(agent)
    assert agent_attributes["gen_ai.operation.name"] == "invoke_agent"
    assert str(agent_attributes["gen_ai.response.id"]).startswith("resp_")
    assert agent_attributes["agentloom.response.status"] == "completed"
    chat = collector.one(f"chat {backend.model}")
    assert (chat.kind, chat.parent_span_id) == (CLIENT, agent.span_id)
    chat_attributes = attributes(chat)
    assert chat_attributes["gen_ai.request.model"] == backend.model
    assert chat_attributes["gen_ai.provider.name"] == "fake"
    assert int(str(chat_attributes["gen_ai.usage.output_tokens"])) > 0
    assert chat_attributes["gen_ai.response.finish_reasons"] == ["stop"]
    database = collector.named("db ")
    assert database, "the response's rows were written in spans of their own"
    assert {_hex(span.trace_id) for span in database if span.parent_span_id} >= {PARENT_TRACE}
    assert all(attributes(span)["db.system.name"] in ("sqlite", "postgresql") for span in database)


async def test_tool_calls_guardrails_and_jobs_have_spans(
    backend: FakeBackend, database_url: str, collector: Collector, scripted: ScriptedModel
) -> None:
    settings = make_settings(backend, database_url).model_copy(
        update={"safety": SafetySettings(shields=[RulesShieldSettings(id="rules")])}
    )
    scripted.add_turn(tool_call("file_search", {"queries": ["kettle"]}))
    scripted.add_turn("Five years.")
    async with traced(settings, collector) as raw:
        client = openai.AsyncOpenAI(base_url=BASE_URL, api_key="unused", http_client=raw)
        store = await client.vector_stores.create(name="docs")
        uploaded = await client.files.create(
            file=("kettle.txt", b"The kettle's warranty lasts five years."), purpose="assistants"
        )
        done = await client.vector_stores.files.create_and_poll(
            file_id=uploaded.id, vector_store_id=store.id
        )
        assert done.status == "completed"
        await client.responses.create(
            model=backend.model,
            input="How long is the warranty?",
            tools=[{"type": "file_search", "vector_store_ids": [store.id]}],
            extra_body={"guardrails": ["rules"]},
        )

    agent = collector.one(f"invoke_agent {backend.model}")
    tool = collector.one("execute_tool file_search")
    assert tool.parent_span_id == agent.span_id
    assert attributes(tool)["gen_ai.tool.name"] == "file_search"
    assert len(collector.named(f"chat {backend.model}")) == 2
    guardrails = collector.named("guardrail rules")
    assert guardrails
    assert {attributes(span)["agentloom.guardrail.verdict"] for span in guardrails} == {"allowed"}
    assert all(span.trace_id == agent.trace_id for span in guardrails)
    (job,) = collector.named("job ingest")
    assert attributes(job)["agentloom.job.kind"] == "ingest"


async def test_chat_completions_passed_through_are_traced(
    settings: Settings, collector: Collector, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hi.")
    async with traced(settings, collector) as raw:
        body = {"model": backend.model, "messages": [{"role": "user", "content": "Hi"}]}
        assert (await raw.post("/chat/completions", json=body)).status_code == 200

    server = collector.one("POST /v1/chat/completions")
    chat = collector.one(f"chat {backend.model}")
    assert (chat.kind, chat.parent_span_id) == (CLIENT, server.span_id)
    assert int(str(attributes(chat)["gen_ai.usage.input_tokens"])) > 0


async def test_without_tracing_no_header_is_sent(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hello!")
    reply = await http.post(
        "/responses",
        json={"model": backend.model, "input": "Hi"},
        headers={"traceparent": f"00-{PARENT_TRACE}-{PARENT_SPAN}-01"},
    )

    assert reply.status_code == 200
    assert "traceresponse" not in reply.headers


@pytest.mark.parametrize(
    ("environ", "on"),
    [
        ({}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, False),
    ],
)
def test_the_standard_variables_turn_tracing_on(environ: dict[str, str], on: bool) -> None:
    assert enabled_by_environment(environ) is on


async def test_the_configured_sampler_and_the_callers_flag_decide(
    settings: Settings,
    collector: Collector,
    backend: FakeBackend,
    scripted: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``OTEL_TRACES_SAMPLER=parentbased_always_off``: nothing of a new trace is recorded, the
    ids still travel (flags ``00``); a caller's sampled ``traceparent`` is recorded whole."""
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "parentbased_always_off")
    scripted.add_turn("Not traced.")
    scripted.add_turn("Traced.")
    async with traced(settings, collector) as raw:
        body = {"model": backend.model, "input": "Hi"}
        quiet = await raw.post("/responses", json=body)
        sampled = await raw.post(
            "/responses",
            json=body,
            headers={"traceparent": f"00-{PARENT_TRACE}-{PARENT_SPAN}-01"},
        )

    assert quiet.headers["traceresponse"].endswith("-00")
    assert sampled.headers["traceresponse"].endswith("-01")
    assert {_hex(span.trace_id) for span in collector.spans} == {PARENT_TRACE}
    assert collector.one(f"invoke_agent {backend.model}")
