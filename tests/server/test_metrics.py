"""``GET /metrics``: Prometheus counts of HTTP requests (by route template and status), responses
by final status, model calls and tokens, read back with ``prometheus_client``'s own parser; the
admin key guards it when keys are on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2
import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.applications import Starlette

from agentloom.inference.scripted import ScriptedModel, delay, tool_call
from agentloom.safety.settings import RulesShieldSettings, SafetySettings
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend
from agentloom.testing.serving import serve_async
from tests.plugins.server import BASE_URL, make_settings, running
from tests.plugins.tenants import ADMIN, Tenant


@pytest.fixture
async def guarded_http(
    backend: FakeBackend, database_url: str
) -> AsyncIterator[httpx2.AsyncClient]:
    """A raw client on an app with a ``pii`` rules shield."""
    shields = [RulesShieldSettings(id="pii", detectors=["email"])]
    settings = make_settings(backend, database_url).model_copy(
        update={"safety": SafetySettings(shields=shields)}
    )
    async with running(create_app(settings)) as application:
        transport = httpx2.ASGITransport(app=application)
        async with httpx2.AsyncClient(transport=transport, base_url=BASE_URL) as raw:
            yield raw


async def samples(
    http: httpx2.AsyncClient, **headers: str
) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    reply = await http.get("http://agentloom.test/metrics", headers=headers)
    assert reply.status_code == 200, reply.text
    assert reply.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(reply.text)
        for sample in family.samples
    }


def value(
    found: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


@pytest.mark.both_databases
async def test_requests_responses_and_tokens_are_counted(
    http: httpx2.AsyncClient,
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    scripted.add_turn("Hello there!")
    scripted.add_turn("Hi again.")
    response = await client.responses.create(model=backend.model, input="Hi")
    await client.responses.retrieve(response.id)
    await client.chat.completions.create(
        model=backend.model, messages=[{"role": "user", "content": "Hi"}]
    )
    await http.get("/no/such/route")

    found = await samples(http)

    http_total = "agentloom_http_requests_total"
    assert value(found, http_total, method="POST", route="/v1/responses", status="200") == 1
    assert (
        value(found, http_total, method="GET", route="/v1/responses/{response_id}", status="200")
        == 1
    )
    assert value(found, http_total, method="POST", route="/v1/chat/completions", status="200") == 1
    assert value(found, http_total, method="GET", route="unmatched", status="404") == 1
    seconds = "agentloom_http_request_duration_seconds_count"
    assert value(found, seconds, method="POST", route="/v1/responses") == 1
    assert value(found, "agentloom_responses_total", model=backend.model, status="completed") == 1
    assert value(found, "agentloom_model_requests_total", model=backend.model) == 2
    assert value(found, "agentloom_tokens_total", model=backend.model, kind="input") > 0
    assert value(found, "agentloom_tokens_total", model=backend.model, kind="output") > 0
    assert value(found, "agentloom_http_requests_in_flight") == 1  # this request


async def test_responses_model_calls_and_streams_are_timed(
    app: Starlette,
    http: httpx2.AsyncClient,
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    scripted.add_turn("Hello there!")
    scripted.add_turn("Streamed", delay(0.3), " slowly.")
    scripted.add_turn("Passed through.")
    await client.responses.create(model=backend.model, input="Hi")
    async with (
        serve_async(app, lifespan=False) as url,  # a real socket: the stream is open meanwhile
        openai.AsyncOpenAI(base_url=url, api_key="unused", max_retries=0) as live,
    ):
        stream = await live.responses.create(model=backend.model, input="Hi", stream=True)
        async for event in stream:
            if event.type == "response.output_text.delta" and event.delta == "Streamed":
                found = await samples(http)  # the backend pauses 0.3 s after this piece
                assert value(found, "agentloom_streams_open", transport="sse") == 1
                assert value(found, "agentloom_responses_in_flight") == 1
    await client.chat.completions.create(
        model=backend.model, messages=[{"role": "user", "content": "Hi"}]
    )

    found = await samples(http)

    model = backend.model
    assert value(found, "agentloom_response_duration_seconds_count", model=model) == 2
    assert value(found, "agentloom_time_to_first_token_seconds_count", model=model) == 2
    calls = "agentloom_model_request_duration_seconds_count"
    assert value(found, calls, provider="fake", model=model, outcome="ok") == 3
    assert value(found, "agentloom_responses_in_flight") == 0
    assert value(found, "agentloom_streams_open", transport="sse") == 0


async def test_the_database_pools_and_the_job_queue_are_read_when_scraped(
    http: httpx2.AsyncClient,
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    scripted.add_turn("Done in the background.")
    response = await client.responses.create(model=backend.model, input="Hi", background=True)
    while response.status in ("queued", "in_progress"):
        response = await client.responses.retrieve(response.id)
    store = await client.vector_stores.create(name="docs")
    uploaded = await client.files.create(
        file=("a.txt", b"Kettles boil water."), purpose="assistants"
    )
    done = await client.vector_stores.files.create_and_poll(
        file_id=uploaded.id, vector_store_id=store.id
    )
    assert done.status == "completed"
    scripted.add_turn(tool_call("file_search", {"queries": ["kettles"]}))
    scripted.add_turn("They boil water.")
    tools: Any = [{"type": "file_search", "vector_store_ids": [store.id]}]
    await client.responses.create(model=backend.model, input="Kettles?", tools=tools)

    found = await samples(http)

    tool_calls = "agentloom_server_tool_call_duration_seconds_count"
    assert value(found, tool_calls, tool="file_search", outcome="completed") == 1
    pools = {
        dict(labels)["pool"] for name, labels in found if name == "agentloom_db_pool_connections"
    }
    assert pools  # SQLite: its pool; PostgreSQL: the transactions, autocommit, statements pools
    assert value(found, "agentloom_jobs", kind="response", status="queued") == 0
    assert value(found, "agentloom_vector_store_files_ingested_total", status="completed") == 1
    assert value(found, "agentloom_vector_store_chunks_embedded_total") >= 1
    assert value(found, "agentloom_vector_store_ingestion_seconds_count") == 1


async def test_guardrail_verdicts_are_counted(
    guarded_http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Fine.")
    body = {"model": backend.model, "input": "Mail me at jo@example.com", "guardrails": ["pii"]}
    assert (await guarded_http.post("/responses", json=body)).status_code == 200

    found = await samples(guarded_http)

    verdicts = "agentloom_guardrail_verdicts_total"
    assert value(found, verdicts, shield="pii", verdict="flagged") == 1


async def test_label_values_stay_bounded(http: httpx2.AsyncClient) -> None:
    """A client cannot grow the series: an unknown method counts as ``other``, an unknown path
    as ``unmatched``."""
    for n in range(3):
        await http.request("BREW", f"/v1/pots/{n}")

    found = await samples(http)

    total = "agentloom_http_requests_total"
    assert value(found, total, method="other", route="unmatched", status="404") == 3
    assert not [key for key in found if ("method", "BREW") in key[1]]


async def test_with_keys_only_the_admin_key_reads_metrics(
    raw: httpx2.AsyncClient, alpha: Tenant
) -> None:
    url = "http://agentloom.test/metrics"

    anonymous = await raw.get(url)
    project = await raw.get(url, headers={"authorization": f"Bearer {alpha.key}"})
    admin = await raw.get(url, headers={"authorization": f"Bearer {ADMIN}"})

    assert anonymous.status_code == 401
    assert anonymous.json()["error"]["type"] == "invalid_request_error"
    assert project.status_code == 403
    assert admin.status_code == 200
    assert "agentloom_http_requests_total" in admin.text


async def test_metrics_can_be_turned_off(backend: FakeBackend, database_url: str) -> None:
    settings = make_settings(backend, database_url)
    off = settings.model_copy(
        update={"server": settings.server.model_copy(update={"metrics": False})}
    )
    async with running(create_app(off)) as application:
        transport = httpx2.ASGITransport(app=application)
        async with httpx2.AsyncClient(transport=transport, base_url=BASE_URL) as raw:
            reply = await raw.get("http://agentloom.test/metrics")
            health = await raw.get("/health")

    assert reply.status_code == 404
    assert reply.json()["error"]["code"] == "metrics_off"
    assert health.status_code == 200
