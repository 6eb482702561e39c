"""The request log summed up over time (``.../requests/summary``), and a project's own view of
the log (``/v1/requests...``), through HTTP on SQLite and PostgreSQL (issue 40, the console's
Usage and Logs)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx2
import openai
import pytest

from agentloom.config import ModelPriceSettings, Settings
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import FAKE_EMBEDDING_MODEL, audited_client
from tests.plugins.tenants import ADMIN, new_tenant, sdk

pytestmark = pytest.mark.both_databases

ADMIN_HEADERS = {"authorization": f"Bearer {ADMIN}"}
INPUT, OUTPUT = 1000.0, 2000.0  # dollars per 1M tokens


@pytest.fixture
def priced(keyed: Settings, backend: FakeBackend) -> Settings:
    server = keyed.server.model_copy(update={"usage_flush_interval": 0.05})
    prices = {backend.model: ModelPriceSettings(input=INPUT, cached_input=INPUT, output=OUTPUT)}
    return keyed.model_copy(update={"server": server, "prices": prices})


async def summary(
    raw: httpx2.AsyncClient, path: str, headers: dict[str, str], **params: Any
) -> dict[str, Any]:
    params.setdefault("start_time", int(time.time()) - 3600)
    reply = await raw.get(path, params=params, headers=headers)
    assert reply.status_code == 200, reply.text
    found: dict[str, Any] = reply.json()
    return found


async def logged_count(raw: httpx2.AsyncClient, count: int) -> None:
    for _ in range(200):
        reply = await raw.get("/organization/requests", headers=ADMIN_HEADERS)
        if len(reply.json()["data"]) >= count:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the log never held the requests")


async def test_the_summary_sums_buckets_totals_and_groups(
    priced: Settings, backend: FakeBackend
) -> None:
    async with audited_client(priced) as raw:
        alpha, beta = await new_tenant(raw, "alpha"), await new_tenant(raw, "beta")
        answer = await alpha.client.responses.create(model=backend.model, input="Hello")
        await alpha.client.chat.completions.create(
            model=backend.model, messages=[{"role": "user", "content": "Hi"}]
        )
        await beta.client.embeddings.create(model=FAKE_EMBEDDING_MODEL, input="text")
        with pytest.raises(openai.NotFoundError):
            await beta.client.responses.create(model="no-such-model", input="Hi")
        await logged_count(raw, 4)
        org = "/organization/requests/summary"
        every = await summary(raw, org, ADMIN_HEADERS, bucket_width="1m")
        errors = await summary(raw, org, ADMIN_HEADERS, errors="true")
        ok = await summary(raw, org, ADMIN_HEADERS, errors="false")
        chats = await summary(raw, org, ADMIN_HEADERS, **{"endpoints[]": "chat.completions"})
        unknown = await summary(raw, org, ADMIN_HEADERS, **{"models[]": "no-such-model"})
        of_beta = await summary(raw, org, ADMIN_HEADERS, **{"project_ids[]": beta.project_id})
        own = await summary(raw, "/requests/summary", beta.headers)
        own_rows = await raw.get("/requests", headers=alpha.headers)
        one = f"/requests/{own_rows.json()['data'][0]['id']}"
        own_row = await raw.get(one, headers=alpha.headers)
        not_own = await raw.get(one, headers=beta.headers)

    assert every["object"] == "requests.summary"
    assert every["bucket_width"] == "1m"
    assert every["start_time"] % 60 == 0
    assert every["end_time"] % 60 == 0
    buckets = every["buckets"]
    assert len(buckets) == (every["end_time"] - every["start_time"]) // 60
    assert all(b["end_time"] - b["start_time"] == 60 for b in buckets)
    assert sum(b["requests"] for b in buckets) == every["totals"]["requests"] == 4
    totals = every["totals"]
    assert totals["errors"] == 1
    assert totals["input_tokens"] == sum(b["input_tokens"] for b in buckets) > 0
    assert totals["output_tokens"] > 0
    usage = answer.usage
    assert usage is not None
    assert totals["cost"] >= (usage.input_tokens * INPUT + usage.output_tokens * OUTPUT) / 1e6
    assert 0 < totals["latency_ms_mean"] <= totals["latency_ms_max"]
    assert 0 < totals["latency_ms_p50"] <= totals["latency_ms_p95"] <= totals["latency_ms_max"]
    timed = [b for b in buckets if b["requests"]]
    weighted = sum(b["latency_ms_mean"] * b["requests"] for b in timed) / 4
    assert totals["latency_ms_mean"] == pytest.approx(weighted)
    assert totals["latency_ms_max"] == max(b["latency_ms_max"] for b in timed)
    assert next(b for b in buckets if not b["requests"])["latency_ms_mean"] is None
    groups = {(g["project_id"], g["endpoint"]): g["requests"] for g in every["groups"]}
    assert groups == {
        (alpha.project_id, "responses"): 1,
        (alpha.project_id, "chat.completions"): 1,
        (beta.project_id, "embeddings"): 1,
        (beta.project_id, "responses"): 1,
    }
    assert errors["bucket_width"] == "1h"
    assert (errors["totals"]["requests"], errors["totals"]["errors"]) == (1, 1)
    assert (ok["totals"]["requests"], ok["totals"]["errors"]) == (3, 0)
    assert [g["endpoint"] for g in chats["groups"]] == ["chat.completions"]
    assert (unknown["totals"]["requests"], unknown["totals"]["errors"]) == (1, 1)  # as asked
    assert of_beta["totals"]["requests"] == own["totals"]["requests"] == 2
    assert {g["project_id"] for g in own["groups"]} == {beta.project_id}
    assert {r["project_id"] for r in own_rows.json()["data"]} == {alpha.project_id}
    assert own_row.status_code == 200
    assert not_own.status_code == 404  # another project's row is not there


async def test_a_project_key_reads_only_its_own_log_linking_what_it_kept(
    priced: Settings, backend: FakeBackend
) -> None:
    async with audited_client(priced) as raw:
        alpha = await new_tenant(raw, "alpha")
        kept = await alpha.client.chat.completions.create(
            model=backend.model, messages=[{"role": "user", "content": "Hi"}], store=True
        )
        anthropic = {
            "model": backend.model,
            "max_tokens": 5,
            "messages": [{"role": "user", "content": "Hi"}],
        }
        said = await raw.post("/messages", json=anthropic, headers=alpha.headers)
        assert said.status_code == 200, said.text
        await logged_count(raw, 2)
        asked_other = await raw.get(
            "/requests", params={"project_ids[]": "proj_other"}, headers=alpha.headers
        )
        org = await raw.get("/organization/requests/summary", headers=alpha.headers)
        admin_in_project = await raw.get(
            "/requests", headers={**ADMIN_HEADERS, "openai-project": alpha.project_id}
        )
        keys = sdk(raw, admin_api_key=ADMIN).admin.organization.projects.api_keys
        restricted = []
        for scopes in (["api.requests.read"], ["api.files.read"]):
            await keys.update(alpha.key_id, project_id=alpha.project_id, scopes=scopes)
            restricted.append(await raw.get("/requests", headers=alpha.headers))
    rows = asked_other.json()["data"]
    assert len(rows) == 2  # the project's own, whatever is asked
    assert rows[1]["response_id"] == kept.id  # the chat completion kept
    assert (rows[0]["endpoint"], rows[0]["model"]) == ("messages", backend.model)  # Anthropic's
    assert rows[0]["input_tokens"] > 0
    assert org.status_code == 403
    assert {r["project_id"] for r in admin_in_project.json()["data"]} == {alpha.project_id}
    assert restricted[0].status_code == 200, restricted[0].text
    assert restricted[1].status_code == 403
    assert "api.requests.read" in restricted[1].json()["error"]["message"]


@pytest.mark.parametrize(
    ("params", "param"),
    [
        ({}, "start_time"),
        ({"start_time": "soon"}, "start_time"),
        ({"start_time": 100, "bucket_width": "1w"}, "bucket_width"),
        ({"start_time": 100, "end_time": 50}, "end_time"),
        ({"start_time": 0, "end_time": 86400 * 2, "bucket_width": "1m"}, "start_time"),
        ({"status": "ok"}, "status"),
    ],
)
async def test_bad_summary_parameters_are_400s_naming_them(
    priced: Settings, params: dict[str, Any], param: str
) -> None:
    if param == "status":
        params["start_time"] = int(time.time()) - 60
    async with audited_client(priced) as raw:
        reply = await raw.get(
            "/organization/requests/summary", params=params, headers=ADMIN_HEADERS
        )
    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["param"] == param
