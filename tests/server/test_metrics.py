"""``GET /metrics``: Prometheus counts of HTTP requests (by route template and status), responses
by final status, model calls and tokens, read back with ``prometheus_client``'s own parser; the
admin key guards it when keys are on."""

from __future__ import annotations

import httpx2
import openai
from prometheus_client.parser import text_string_to_metric_families

from agentloom.inference.scripted import ScriptedModel
from agentloom.testing.backend import FakeBackend
from tests.plugins.tenants import ADMIN, Tenant


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
