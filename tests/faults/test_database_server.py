"""A real ``agentloom serve`` process on PostgreSQL whose database sessions are ended while
requests flow, or whose database turns it away for a while and comes back.

Every request answers normally or with OpenAI's 503 envelope (``database_unavailable``); a
stream ends with its terminal event or an ``error`` event, never a cut connection; no response
is left ``in_progress``; and once the database is back the process serves as before, its
background duties (heartbeat, job runner) alive, with no more sessions open than before.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import asyncpg
import httpx2
import pytest

from agentloom.inference.scripted import ScriptedModel, delay
from agentloom.testing.backend import FakeBackend
from tests.e2e.test_restart import Server
from tests.faults import postgres
from tests.faults.support import eventually, served, sse_events, status_of
from tests.plugins.db import _dsn, _empty_tables

BOUND = 60.0  # seconds: a test still running after this has hung
FAST = "[server]\nheartbeat_interval = 0.2\n\n[jobs]\nlease_seconds = 2\n"
UNAVAILABLE = "database_unavailable"
CLIENTS = 8


@pytest.fixture
async def pg_url(postgres_url: str) -> str:
    await _empty_tables(postgres_url)
    return postgres_url


@pytest.fixture
async def server(backend: FakeBackend, pg_url: str, tmp_path: Path) -> AsyncIterator[Server]:
    with served(backend, pg_url, tmp_path, config=FAST) as process:
        yield process
    log = process.output()
    assert "Exception in 'lifespan' protocol" not in log, log
    assert "unhandled error" not in log, log


@pytest.fixture
async def http(server: Server) -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(base_url=server.base_url, timeout=20.0) as client:
        yield client


def _unavailable(reply: httpx2.Response) -> bool:
    """OpenAI's envelope with 503 ``database_unavailable``, and nothing else."""
    if reply.status_code != 503:
        return False
    error = reply.json()["error"]
    return error["type"] == "server_error" and error["code"] == UNAVAILABLE


def _stream_ended_well(body: str) -> bool:
    """Completed, or told plainly that the database was lost (``error`` or a failure)."""
    last = sse_events(body)[-1]
    if last["type"] == "response.completed":
        return body.endswith("data: [DONE]\n\n")
    if last["type"] == "error":
        return bool(last["code"] == UNAVAILABLE)
    return last["type"] == "response.failed" and last["response"]["error"]["code"] == UNAVAILABLE


async def _one_request(http: httpx2.AsyncClient, model: str, kind: int) -> str | None:
    """One request of a mix; what was wrong with its answer, or ``None``."""
    body: dict[str, Any] = {"model": model, "input": "Hello"}
    if kind == 0:
        reply = await http.post("/responses", json=body)
        good = reply.status_code == 200 and reply.json()["status"] == "completed"
    elif kind == 1:
        reply = await http.post("/responses", json={**body, "stream": True})
        good = reply.status_code == 200 and _stream_ended_well(reply.text)
    elif kind == 2:
        reply = await http.post("/responses", json={**body, "background": True})
        good = reply.status_code == 200 and reply.json()["status"] == "queued"
    else:
        reply = await http.post("/conversations", json={})
        good = reply.status_code == 200
    return None if good or _unavailable(reply) else f"{kind}: {reply.status_code} {reply.text}"


async def _flowing(
    http: httpx2.AsyncClient, model: str, fault: Callable[[], Awaitable[None]]
) -> tuple[int, list[str]]:
    """``CLIENTS`` clients sending a mix of requests until ``fault`` is over; how many were
    sent, and what was wrong."""
    wrong: list[str] = []
    sent = 0
    done = anyio.Event()

    async def client(number: int) -> None:
        nonlocal sent
        kind = number
        while not done.is_set():
            kind += 1
            sent += 1
            problem = await _one_request(http, model, kind % 4)
            if problem is not None:
                wrong.append(problem)

    async def run_fault() -> None:
        await fault()
        done.set()

    async with anyio.create_task_group() as tasks:
        for number in range(CLIENTS):
            tasks.start_soon(client, number)
        tasks.start_soon(run_fault)
    return sent, wrong


async def _healthy(http: httpx2.AsyncClient, scripted: ScriptedModel, model: str, url: str) -> None:
    """Serving as before: answers, streams, a background response runs to its end, the
    heartbeat beats, nothing is left in progress."""

    async def settled() -> bool:
        return await _scalar(url, UNFINISHED) == 0

    await eventually(settled, "no response left queued or in progress")
    scripted.add_turns("Answered.", "Streamed.", "In the background.")
    reply = await http.post("/responses", json={"model": model, "input": "After"})
    assert reply.status_code == 200, reply.text
    streamed = await http.post("/responses", json={"model": model, "input": "x", "stream": True})
    assert sse_events(streamed.text)[-1]["type"] == "response.completed"
    queued = await http.post("/responses", json={"model": model, "input": "y", "background": True})
    response_id = queued.json()["id"]

    async def background_done() -> bool:
        return await status_of(http, response_id) == "completed"

    await eventually(background_done, "a background response to complete")
    beat = await _scalar(url, "SELECT max(heartbeat_at) FROM instances")

    async def beating() -> bool:
        return await _scalar(url, "SELECT max(heartbeat_at) FROM instances") > beat

    await eventually(beating, "the heartbeat to advance")


UNFINISHED = "SELECT count(*) FROM responses WHERE status IN ('queued', 'in_progress')"


async def _scalar(url: str, query: str) -> float:
    conn = await asyncpg.connect(_dsn(url), timeout=5)
    try:
        return float(await conn.fetchval(query) or 0)
    finally:
        await conn.close()


async def test_sessions_ended_while_requests_flow(
    scripted: ScriptedModel, backend: FakeBackend, pg_url: str, http: httpx2.AsyncClient
) -> None:
    async def kill_three_times() -> None:
        for _ in range(3):
            await anyio.sleep(0.4 + random.random() * 0.2)
            await postgres.terminate(pg_url)
        await anyio.sleep(0.3)

    with anyio.fail_after(BOUND):
        before = await postgres.sessions(pg_url)
        sent, wrong = await _flowing(http, backend.model, kill_three_times)
        await _healthy(http, scripted, backend.model, pg_url)
        after = await postgres.sessions(pg_url)

    assert sent > 3 * CLIENTS
    assert wrong == []
    assert after <= max(before, 3 * 20 + 1)  # [database] pool_size 20: three pools, a listener


async def _stream_with_outage(
    http: httpx2.AsyncClient, model: str, url: str, seconds: float
) -> list[dict[str, Any]]:
    """A streamed response whose database goes away for ``seconds`` from its first delta
    (the final write falls in the outage); the events the client read."""
    events: list[dict[str, Any]] = []
    body = {"model": model, "input": "Hi", "stream": True}

    async def outage() -> None:
        async with postgres.away(url):
            await anyio.sleep(seconds)

    async with (
        anyio.create_task_group() as tasks,
        http.stream("POST", "/responses", json=body) as reply,
    ):
        assert reply.status_code == 200
        async for line in reply.aiter_lines():
            first = not any(e["type"] == "response.output_text.delta" for e in events)
            events += sse_events(line)
            if first and events and events[-1]["type"] == "response.output_text.delta":
                tasks.start_soon(outage)
    return events


async def test_a_final_write_lost_while_the_database_is_away_lands_when_it_is_back(
    scripted: ScriptedModel, backend: FakeBackend, pg_url: str, http: httpx2.AsyncClient
) -> None:
    """Away for less than a stream waits: the client sees nothing but a late completion."""
    scripted.add_turn("Hel", delay(0.3), "lo")

    with anyio.fail_after(BOUND):
        events = await _stream_with_outage(http, backend.model, pg_url, 1.0)
        stored = (await http.get(f"/responses/{events[0]['response']['id']}")).json()
        await _healthy(http, scripted, backend.model, pg_url)

    assert events[-1]["type"] == "response.completed"
    assert stored["status"] == "completed"
    assert stored["output"][0]["content"][0]["text"] == "Hello"


async def test_a_final_write_lost_for_longer_is_an_error_event_and_lands_later(
    scripted: ScriptedModel, backend: FakeBackend, pg_url: str, http: httpx2.AsyncClient
) -> None:
    """Away for longer: the stream ends with an ``error`` event (not a cut connection), and
    the response's final state is written once the database is back."""
    scripted.add_turn("Hel", delay(0.3), "lo")

    with anyio.fail_after(BOUND):
        events = await _stream_with_outage(http, backend.model, pg_url, 5.0)
        response_id = events[0]["response"]["id"]

        async def landed() -> bool:
            return await status_of(http, response_id) == "completed"  # None until it lands

        await eventually(landed, "the final state to be written")
        await _healthy(http, scripted, backend.model, pg_url)

    assert events[-1]["type"] == "error"
    assert events[-1]["code"] == UNAVAILABLE
    assert events[-1]["sequence_number"] == events[-2]["sequence_number"] + 1


async def test_a_background_response_ending_in_a_long_outage_is_run_again(
    scripted: ScriptedModel, backend: FakeBackend, pg_url: str, http: httpx2.AsyncClient
) -> None:
    """Neither its end nor its failure can be written: the job is left to its lease, taken
    over once the database is back and run again (the job runner was not stopped)."""
    scripted.add_turn("Thinking", delay(0.5), " hard.")
    scripted.add_turn("Done after the outage.")

    with anyio.fail_after(BOUND):
        queued = await http.post(
            "/responses", json={"model": backend.model, "input": "Hi", "background": True}
        )
        response_id = queued.json()["id"]

        async def running() -> bool:
            return await status_of(http, response_id) == "in_progress"

        await eventually(running, "the background response to run")
        async with postgres.away(pg_url):
            await anyio.sleep(5.0)

        async def ended() -> bool:
            return await status_of(http, response_id) in ("completed", "failed")

        await eventually(ended, "the background response to end", within=20.0)
        final = (await http.get(f"/responses/{response_id}")).json()
        streamed = await http.get(f"/responses/{response_id}", params={"stream": "true"})
        await _healthy(http, scripted, backend.model, pg_url)

    assert final["status"] == "completed", final
    assert final["output"][0]["content"][0]["text"] == "Done after the outage."
    assert [e["type"] for e in sse_events(streamed.text)][-1] == "response.completed"
