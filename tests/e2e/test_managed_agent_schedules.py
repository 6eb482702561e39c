"""A managed agent's schedule across real ``agentloom serve`` processes on one PostgreSQL
database: two processes tick it once per fire between them, and after both stop (a restart in
the middle of the schedule) a new process carries the ticks on."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path
from typing import Any

import httpx2

from agentloom.inference.scripted import ScriptedModel, delay
from agentloom.testing.backend import FakeBackend
from tests.e2e.support import received
from tests.e2e.test_restart import WAIT, Server, _env, agentloom_serve
from tests.plugins.db import _empty_tables


def _runs(http: httpx2.Client, agent_id: str) -> list[dict[str, Any]]:
    listed = http.get(f"/managed-agents/{agent_id}/runs", params={"order": "asc", "limit": 100})
    runs: list[dict[str, Any]] = listed.json()["data"]
    return runs


def _wait_runs(http: httpx2.Client, agent_id: str, count: int) -> list[dict[str, Any]]:
    """The agent's runs once ``count`` of them have completed and none is queued or going."""
    deadline = time.monotonic() + 2 * WAIT
    while True:
        runs = _runs(http, agent_id)
        done = [r for r in runs if r["status"] == "completed"]
        if len(done) >= count and len(done) == len(runs):
            return runs
        assert time.monotonic() < deadline, f"fewer than {count} ticks: {runs}"
        time.sleep(0.1)


def _stop(server: Server) -> None:
    """SIGTERM: the server finishes (or hands back) what it runs, then exits."""
    server.process.send_signal(signal.SIGTERM)
    server.process.wait(timeout=WAIT)


def test_two_processes_tick_once_per_fire_and_a_restart_carries_on(
    scripted: ScriptedModel, backend: FakeBackend, postgres_url: str, tmp_path: Path
) -> None:
    asyncio.run(_empty_tables(postgres_url))
    scripted.respond_with(lambda _request: [delay(0.2), "All quiet."])
    env = {
        **_env(postgres_url, backend),
        "AGENTLOOM_AGENTS_DIRECTORY": str(tmp_path / "agents"),
        "AGENTLOOM_JOBS_DRAIN_SECONDS": "3",
    }
    config = {
        "model": backend.model,
        "task": "Check.",
        "schedule": {"type": "interval", "every": 1},
    }
    body = {"name": "watcher", "agent_type": "orchestrator", "config": config}

    with (
        agentloom_serve(env, tmp_path / "one.log") as one,
        agentloom_serve(env, tmp_path / "two.log") as two,
        httpx2.Client(base_url=one.base_url, timeout=WAIT) as first,
        httpx2.Client(base_url=two.base_url, timeout=WAIT) as second,
    ):
        agent = first.post("/managed-agents", json=body).json()
        before = _wait_runs(second, agent["id"], 2)
        _stop(one)
        _stop(two)
    with (
        agentloom_serve(env, tmp_path / "three.log") as three,
        httpx2.Client(base_url=three.base_url, timeout=WAIT) as http,
    ):
        path = f"/managed-agents/{agent['id']}"
        _wait_runs(http, agent["id"], len(before) + 2)
        replayed = http.get(f"{path}/runs/{before[0]['id']}", params={"stream": "true"}).text
        fired = http.get(path).json()["schedule"]["runs"]
        http.patch(path, json={"config": {"model": backend.model}})  # no more ticks
        after = _wait_runs(http, agent["id"], fired)

    # before the restart, between the two processes, and after it: every fire one run, every
    # run one model call (none twice, none lost); the schedule went on where it was
    assert len(before) >= 2
    assert [r["id"] for r in after[: len(before)]] == [r["id"] for r in before]
    assert all(r["trigger"] == "schedule" for r in after)
    assert len(after) in (fired, fired + 1)  # a fire between the count and the change
    assert len(received(backend)) == len(after)
    # a run of the first processes, followed from the third: its frames as they were made
    assert '"content":"All quiet."' in replayed
    assert replayed.endswith("data: [DONE]\n\n")
