"""Job pools, over a real socket, on both databases: background responses held by a backend that
does not answer fill their pool, and ingestion still runs; one project's backlog of background
responses does not keep another project's one waiting behind it. Before, ``[jobs] concurrency``
workers served every kind in the order jobs were queued: two stuck responses stopped all
background work of the process, and a backlog ran whole before anyone else's job."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from agentloom.config import AuthSettings, JobSettings, Settings
from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import ScriptedModel, ScriptItem, TurnPart, delay, text
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import make_settings
from tests.plugins.tenants import ADMIN, ADMIN_ENV

pytestmark = pytest.mark.both_databases  # the claim is the storage's

BOUND = 10.0  # seconds a test waits at most for what it expects (it comes in well under)
POOL = 2  # [jobs] concurrency: jobs of each kind a process runs at once


@dataclass
class Gate:
    """The backend's answers: a request whose ``prompt_cache_key`` starts with ``stuck`` is held
    (headers sent, no token) until the gate opens; the others take a quarter of a second."""

    open: bool = False

    def respond(self, request: ChatRequest) -> Sequence[TurnPart] | AsyncIterator[ScriptItem]:
        if (request.prompt_cache_key or "").startswith("stuck"):
            return self._held()
        return [delay(0.25), "Done."]

    async def _held(self) -> AsyncIterator[ScriptItem]:
        while True:  # the backend serves in a thread of its own: a flag, polled
            if self.open:
                break
            await asyncio.sleep(0.02)
        for item in text("Released."):
            yield item


@pytest.fixture
def settings(
    backend: FakeBackend, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Settings:
    """Keys on (projects named by the admin key), a provider patient enough to stay stuck."""
    monkeypatch.setenv(ADMIN_ENV, ADMIN)
    base = make_settings(backend, database_url, timeout=30.0, files_directory=tmp_path / "files")
    return base.model_copy(
        update={
            "auth": AuthSettings(mode="keys", admin_key_env=ADMIN_ENV),
            "jobs": JobSettings(concurrency=POOL, drain_seconds=0.5),
        }
    )


@pytest.fixture
def gate(scripted: ScriptedModel) -> Gate:
    made = Gate()
    scripted.respond_with(made.respond)
    return made


async def _project(live_url: str, name: str) -> httpx2.AsyncClient:
    """A client acting in a new project (the admin key naming it)."""
    admin = {"authorization": f"Bearer {ADMIN}"}
    async with httpx2.AsyncClient(base_url=live_url, headers=admin, timeout=BOUND) as http:
        made = await http.post("/organization/projects", json={"name": name})
    assert made.status_code == 200, made.text
    headers = {**admin, "openai-project": made.json()["id"]}
    return httpx2.AsyncClient(base_url=live_url, headers=headers, timeout=BOUND)


async def _background(http: httpx2.AsyncClient, model: str, key: str) -> str:
    body = {"model": model, "input": "Hi", "background": True, "prompt_cache_key": key}
    created = await http.post("/responses", json=body)
    assert created.status_code == 200, created.text
    response_id: str = created.json()["id"]
    return response_id


async def _status(http: httpx2.AsyncClient, response_id: str) -> str:
    status: str = (await http.get(f"/responses/{response_id}")).json()["status"]
    return status


async def _until(http: httpx2.AsyncClient, ids: list[str], status: str) -> None:
    """Wait until each response of ``ids`` has ``status``."""
    while True:
        if {await _status(http, response_id) for response_id in ids} == {status}:
            return
        await anyio.sleep(0.05)


async def _ingested(http: httpx2.AsyncClient) -> dict[str, Any]:
    """A vector store made with one file, once that file is ingested."""
    files = {"file": ("notes.txt", b"The pools keep each kind of job apart.", "text/plain")}
    uploaded = await http.post("/files", data={"purpose": "assistants"}, files=files)
    assert uploaded.status_code == 200, uploaded.text
    made = await http.post("/vector_stores", json={"file_ids": [uploaded.json()["id"]]})
    assert made.status_code == 200, made.text
    while True:
        store: dict[str, Any] = (await http.get(f"/vector_stores/{made.json()['id']}")).json()
        if not store["file_counts"]["in_progress"]:
            return store
        await anyio.sleep(0.05)


async def test_stuck_background_responses_do_not_hold_up_ingestion(
    live_url: str, backend: FakeBackend, gate: Gate
) -> None:
    http = await _project(live_url, "stuck")
    async with http:
        with anyio.fail_after(BOUND):
            stuck = [await _background(http, backend.model, f"stuck-{n}") for n in range(POOL + 1)]
            await _until(http, stuck[:POOL], "in_progress")
            store = await _ingested(http)  # meanwhile: another kind, its own pool
            waiting = await _status(http, stuck[POOL])
            gate.open = True
            await _until(http, stuck, "completed")

    assert store["file_counts"]["completed"] == 1
    assert waiting == "queued"  # the responses' pool was full: the third waited its turn


async def test_a_projects_backlog_does_not_delay_another_projects_response(
    live_url: str, backend: FakeBackend, gate: Gate, scripted: ScriptedModel
) -> None:
    busy, quiet = await _project(live_url, "busy"), await _project(live_url, "quiet")
    async with busy, quiet:
        with anyio.fail_after(BOUND):
            backlog = [await _background(busy, backend.model, f"busy-{n}") for n in range(12)]
            before = len(scripted.requests)  # the backlog's jobs claimed so far
            single = await _background(quiet, backend.model, "quiet")
            await _until(quiet, [single], "completed")
            await _until(busy, backlog, "completed")

    order = [request.prompt_cache_key for request in scripted.requests]
    assert len(order) == 13
    assert before + POOL < 12  # a backlog was still queued (the test shows something)
    # claimed at the first free slot: at most POOL more of the backlog (claimed while it was
    # being queued) went first, not the rest of the twelve
    assert order.index("quiet") <= before + POOL
