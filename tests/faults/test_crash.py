"""A server process killed with SIGKILL mid-stream, beside another live process on the same
database (a PostgreSQL, or one SQLite file).

The stream's client sees its connection drop at once (no hang). The live process sees the
killed one is gone (its process no longer runs on this host, or its heartbeat went stale) and
fails its orphaned ``in_progress`` response, takes over its conversation's lock and its
background job, and serves on. The killed process, restarted, is healthy.

Restarting alone after a crash: ``tests/e2e/test_restart.py``; a killed process's job taken
over by a restarted one: ``tests/e2e/test_background_processes.py``.
"""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import ScriptedModel, TurnPart, delay
from agentloom.testing.backend import FakeBackend
from tests.faults.support import WAIT, eventually, served, sse_events, status_of

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

BOUND = 60.0  # seconds: the test is over long before this, or it hung
FAST = "[server]\nheartbeat_interval = 0.2\nabandoned_after = 2.0\n\n[jobs]\nlease_seconds = 2\n"
LONG = ["Thinking", delay(60), "never sent"]
ONE: dict[str, Any] = {"config": FAST, "name": "one"}


def _by_input(model: ScriptedModel) -> None:
    """Answers by the request's last user message: the first background run and the
    foreground stream take their time (the process is killed meanwhile); a background run
    taken over answers at once; anything else is echoed."""
    background_runs = 0

    def respond(request: ChatRequest) -> Sequence[TurnPart]:
        nonlocal background_runs
        said = str(request.messages[-1].content)
        if said == "In the background":
            background_runs += 1
            return LONG if background_runs == 1 else ["Done by the other process."]
        if said == "Take your time":
            return LONG
        return [f"Echo: {said}"]

    model.respond_with(respond)


async def _first_delta(lines: AsyncIterator[str]) -> str:
    """The response's id, once its first text delta arrived (``lines`` must stay referenced
    by the caller: closing them would close the stream, a client disconnect)."""
    response_id = ""
    async for line in lines:
        for event in sse_events(line):
            if event["type"] == "response.created":
                response_id = event["response"]["id"]
            if event["type"] == "response.output_text.delta":
                return response_id
    raise AssertionError("the stream ended before its first delta")


async def _response(http: httpx2.AsyncClient, response_id: str) -> dict[str, Any]:
    body: dict[str, Any] = (await http.get(f"/responses/{response_id}")).json()
    return body


async def _dropped(lines: AsyncIterator[str]) -> bool:
    """Whether the rest of the stream ends in a transport error (the connection dropped)."""
    try:
        async for _ in lines:
            pass
    except httpx2.TransportError:
        return True
    return False


async def _cleaned_up(
    live: httpx2.AsyncClient, model: str, streamed: str, job: str, conversation: str
) -> tuple[dict[str, Any], dict[str, Any], httpx2.Response, list[dict[str, Any]]]:
    """Once the live process failed the orphan and finished the job: both responses, a next
    turn on the conversation, and the conversation's items."""

    async def orphan_failed() -> bool:
        return await status_of(live, streamed) == "failed"

    async def job_done() -> bool:
        return await status_of(live, job) == "completed"

    await eventually(orphan_failed, "the live process to fail the orphan")
    await eventually(job_done, "the live process to take the job over")
    next_turn = {"model": model, "input": "Next", "conversation": conversation}
    turn = await live.post("/responses", json=next_turn)
    items = (await live.get(f"/conversations/{conversation}/items")).json()["data"]
    return await _response(live, streamed), await _response(live, job), turn, items


async def test_a_process_killed_mid_stream_is_cleaned_up_by_the_live_one(
    scripted: ScriptedModel, backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    _by_input(scripted)
    model = backend.model
    with anyio.fail_after(BOUND), served(backend, database_url, tmp_path, **ONE) as one:
        async with httpx2.AsyncClient(base_url=one.base_url, timeout=WAIT) as doomed:
            conversation = (await doomed.post("/conversations", json={})).json()["id"]
            background = {"model": model, "input": "In the background", "background": True}
            job = (await doomed.post("/responses", json=background)).json()["id"]
            body = {"model": model, "input": "Take your time", "stream": True}
            body["conversation"] = conversation
            async with doomed.stream("POST", "/responses", json=body) as reply:
                lines = reply.aiter_lines()
                streamed = await _first_delta(lines)

                async def running() -> bool:
                    stored = await status_of(doomed, streamed) == "in_progress"
                    return stored and await status_of(doomed, job) == "in_progress"

                await eventually(running, "both responses to run on the doomed process")
                # the live process starts only now: the job runs on the doomed one
                with served(backend, database_url, tmp_path, config=FAST, name="two") as two:
                    async with httpx2.AsyncClient(base_url=two.base_url, timeout=WAIT) as live:
                        one.process.send_signal(signal.SIGKILL)
                        one.process.wait(timeout=WAIT)
                        dropped = await _dropped(lines)
                        orphan, taken_over, turn, items = await _cleaned_up(
                            live, model, streamed, job, conversation
                        )

        with served(backend, database_url, tmp_path, **ONE) as again:
            async with httpx2.AsyncClient(base_url=again.base_url, timeout=WAIT) as restarted:
                after = await restarted.post("/responses", json={"model": model, "input": "Hi"})
                seen = await _response(restarted, streamed)

    assert dropped  # the client saw the connection go, it did not wait on it
    assert orphan["status"] == "failed"
    assert orphan["error"]["code"] == "server_error"
    assert "stopped" in orphan["error"]["message"]
    assert taken_over["output"][0]["content"][0]["text"] == "Done by the other process."
    assert turn.status_code == 200, turn.text  # the conversation's lock was taken over
    assert turn.json()["output"][0]["content"][0]["text"] == "Echo: Next"
    texts = [item["content"][0]["text"] for item in items]
    assert texts == ["Echo: Next", "Next"]  # newest first: the orphan's turn added nothing
    assert after.status_code == 200, after.text
    assert seen["status"] == "failed"
