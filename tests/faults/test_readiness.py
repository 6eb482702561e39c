"""``/v1/health`` (liveness) and ``/v1/health/ready`` (readiness): each part probed, the
verdict as a status code a load balancer uses. A backend down from the start, then up, over a
real process: ``tests/faults/test_backend_down.py``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from agentloom.config import (
    AuthSettings,
    McpServerSettings,
    McpSettings,
    ProviderSettings,
    SearchSourceSettings,
    Settings,
    WebSearchSettings,
)
from agentloom.services.readiness import Checked, Probe, ReadinessRounds
from agentloom.testing.backend import FakeBackend
from tests.inference.support import closed_port_url
from tests.plugins.server import BASE_URL, audited_client, make_settings

pytestmark = pytest.mark.both_databases  # the database is one of the parts probed

SECRET = "s3cretpw"


def _checks(answer: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(c["kind"], c["name"]): c for c in answer["checks"]}


async def test_ready_when_every_part_is_up(http: httpx2.AsyncClient, database_url: str) -> None:
    reply = await http.get("/health/ready")

    assert reply.status_code == 200
    answer = reply.json()
    assert answer["status"] == "ready"
    checks = _checks(answer)
    assert set(checks) == {
        ("database", database_url.split(":")[0]),
        ("backend", "fake"),
        ("job_runner", "job runner"),
    }
    assert all(c["status"] == "ok" and "error" not in c for c in checks.values())


async def test_tools_down_leave_the_server_degraded_not_unready(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    down = closed_port_url().removesuffix("/v1")
    mcp = McpSettings(
        servers=[
            McpServerSettings(label="remote", url=f"http://user:{SECRET}@{down[7:]}/mcp"),
            McpServerSettings(label="local", command="/nonexistent/mcp-server"),
        ]
    )
    web = WebSearchSettings(offline=SearchSourceSettings(provider="searxng", base_url=down))
    config = make_settings(backend, database_url, files_directory=tmp_path / "files")
    config = config.model_copy(update={"mcp": mcp, "web_search": web})

    async with audited_client(config) as http:
        reply = await http.get("/health/ready")

    assert reply.status_code == 200
    assert reply.json()["status"] == "degraded"
    checks = _checks(reply.json())
    assert checks["backend", "fake"]["status"] == "ok"
    remote = checks["mcp_server", "remote"]
    assert remote["status"] == "down"
    assert f"http://***@{down[7:]}/mcp" in remote["error"]
    assert SECRET not in reply.text
    assert "'/nonexistent/mcp-server' is not found" in checks["mcp_server", "local"]["error"]
    assert checks["web_search", "offline (searxng)"]["status"] == "down"


def _unreachable(backend: FakeBackend, database_url: str, tmp_path: Path) -> Settings:
    """One provider, its model configured, at a port nothing listens on."""
    provider = ProviderSettings(name="local", base_url=closed_port_url(), models=["llama3.2"])
    config = make_settings(backend, database_url, files_directory=tmp_path / "files")
    return config.model_copy(update={"providers": [provider]})


async def test_no_backend_reachable_is_not_ready_and_a_configured_model_a_503(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    async with audited_client(_unreachable(backend, database_url, tmp_path)) as http:
        ready = await http.get("/health/ready")
        live = await http.get("/health")
        models = await http.get("/models")
        client = openai.AsyncOpenAI(base_url=BASE_URL, api_key="x", http_client=http, max_retries=0)
        with pytest.raises(openai.APIStatusError) as caught:
            await client.responses.create(model="llama3.2", input="Hi")

    assert live.status_code == 200  # liveness checks nothing
    assert ready.status_code == 503
    assert ready.json()["status"] == "not_ready"
    assert _checks(ready.json())["backend", "local"]["status"] == "down"
    assert "llama3.2" in [m["id"] for m in models.json()["data"]]  # configured: always known
    assert caught.value.status_code == 503
    error = caught.value.response.json()["error"]
    assert error["code"] == "backend_unavailable"
    assert error["type"] == "server_error"
    assert "could not reach the inference backend 'local' at http://127.0.0.1:" in error["message"]


async def test_readiness_needs_no_key(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    config = make_settings(backend, database_url, files_directory=tmp_path / "files")
    config = config.model_copy(update={"auth": AuthSettings(mode="keys")})

    async with audited_client(config) as http:
        assert (await http.get("/health/ready")).status_code == 200
        assert (await http.get("/models")).status_code == 401


async def test_a_flood_of_readiness_checks_probes_one_round_at_a_time() -> None:
    rounds = 0
    release = asyncio.Event()

    async def slow() -> str | None:
        nonlocal rounds
        rounds += 1
        await release.wait()
        return None

    shared = ReadinessRounds()
    asking = [
        asyncio.create_task(shared.checked(lambda: [Probe("database", "db", slow)]))
        for _ in range(50)
    ]
    await asyncio.sleep(0.01)
    release.set()
    answers = await asyncio.gather(*asking)

    assert rounds == 2  # the one running when they asked, then one for all who waited
    assert all(a == [Checked("database", "db")] for a in answers)
    await shared.checked(lambda: [Probe("database", "db", slow)])
    assert rounds == 3  # asked after the rounds ended: a round of its own
