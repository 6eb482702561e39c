"""SIGTERM under load: ``agentloom serve`` stops accepting connections at once, lets the streams in
flight finish (within uvicorn's graceful timeout), hands its running background jobs back to the
queue (within ``[jobs] drain_seconds``) and exits cleanly; the next process runs the jobs."""

from __future__ import annotations

import asyncio
import signal
import time
from collections import Counter
from pathlib import Path

import httpx2
import pytest

from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import ScriptedModel, Turn, delay
from agentloom.testing.backend import FakeBackend
from tests.e2e.test_background_processes import _wait_status
from tests.e2e.test_restart import WAIT, _env, agentloom_serve

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

STREAMS = 8
JOBS = 2


def _answers() -> tuple[Counter[str], object]:
    """Streams answer in two parts 1.5 s apart; a background job's first run would take a
    minute (it is handed back), its second answers at once."""
    runs: Counter[str] = Counter()

    def respond(request: ChatRequest) -> Turn:
        asked = str(request.messages[-1].content)
        runs[asked] += 1
        if asked.startswith("stream"):
            return ("Part one,", delay(1.5), " part two.")
        if runs[asked] == 1:
            return ("Thinking", delay(60), "never sent")
        return (f"Done: {asked}.",)

    return runs, respond


async def _stream(
    base_url: str, model: str, number: int, started: asyncio.Event, seen: list[int]
) -> str:
    """One streamed response read to its end; its last event's type."""
    body = {"model": model, "input": f"stream {number}", "stream": True}
    last = ""
    async with (
        httpx2.AsyncClient(base_url=base_url, timeout=WAIT) as http,
        http.stream("POST", "/responses", json=body) as reply,
    ):
        async for line in reply.aiter_lines():
            if line.startswith("event: "):
                last = line.removeprefix("event: ")
                if last == "response.output_text.delta" and number not in seen:
                    seen.append(number)
                    if len(seen) == STREAMS:
                        started.set()
    return last


def _refused(base_url: str) -> bool:
    """Whether a new connection is refused (tried for up to a second)."""
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        try:
            httpx2.get(f"{base_url}/health", timeout=0.5)
        except httpx2.ConnectError:
            return True
        except httpx2.TransportError:
            pass
        time.sleep(0.02)
    return False


def test_sigterm_drains_streams_and_hands_jobs_back(
    scripted: ScriptedModel, backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    runs, respond = _answers()
    scripted.respond_with(respond)  # type: ignore[arg-type]
    env = {**_env(database_url, backend), "AGENTLOOM_JOBS_DRAIN_SECONDS": "0.5"}

    with agentloom_serve(env, tmp_path / "one.log") as first:
        with httpx2.Client(base_url=first.base_url, timeout=WAIT) as http:
            jobs = [
                http.post(
                    "/responses",
                    json={"model": backend.model, "input": f"job {n}", "background": True},
                ).json()["id"]
                for n in range(JOBS)
            ]
            for job in jobs:
                _wait_status(http, job, {"in_progress"})

        async def load() -> tuple[list[str], bool, float]:
            started, seen = asyncio.Event(), []
            streams = [
                asyncio.create_task(_stream(first.base_url, backend.model, n, started, seen))
                for n in range(STREAMS)
            ]
            await asyncio.wait_for(started.wait(), WAIT)
            stopping = time.monotonic()
            first.process.send_signal(signal.SIGTERM)
            refused = await asyncio.to_thread(_refused, first.base_url)
            ends = await asyncio.gather(*streams)
            return ends, refused, time.monotonic() - stopping

        ends, refused, drained = asyncio.run(load())
        code = first.process.wait(timeout=WAIT)

    assert ends == ["response.completed"] * STREAMS, first.output()
    assert refused, "a new connection was accepted after SIGTERM"
    assert code in (0, -signal.SIGTERM), first.output()  # uvicorn re-raises the signal it took
    assert "Application shutdown complete" in first.output()
    assert "cancelled" not in first.output()  # handed back, never stored as ended
    assert drained < WAIT
    with (
        agentloom_serve(env, tmp_path / "two.log") as second,
        httpx2.Client(base_url=second.base_url, timeout=WAIT) as http,
    ):
        finals = [_wait_status(http, job, {"completed", "failed", "cancelled"}) for job in jobs]
        listed = http.get("/responses", params={"limit": 100}).json()["data"]
    assert [final["status"] for final in finals] == ["completed"] * JOBS, second.output()
    assert all(runs[f"job {n}"] == 2 for n in range(JOBS))  # handed back, run again
    streamed = [r for r in listed if r["id"] not in jobs]
    assert len(streamed) == STREAMS
    assert {r["status"] for r in streamed} == {"completed"}
