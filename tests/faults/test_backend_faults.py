"""The inference backend fails, over a real socket, streamed and not, on both databases.

Each fault is checked four ways: the client's error (OpenAI's envelope and status; a stream
ends with ``response.failed`` and ``[DONE]``), the stored response (``failed``, the error
recorded, what was streamed before kept and marked ``incomplete``), no hang (every exchange
under a bound the test sets), and health after (the next requests are answered normally).
The same faults in-process, in more shapes: ``tests/server/test_failures.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import pytest

from agentloom.errors import UpstreamError, UpstreamRateLimitError
from agentloom.inference.scripted import (
    ScriptedModel,
    TurnPart,
    break_stream,
    invalid_chunk,
    raise_error,
    stall,
    text,
)
from agentloom.testing.backend import FakeBackend
from tests.faults.support import sse_events

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

BOUND = 10.0  # seconds: an exchange still running after this has hung


@dataclass(frozen=True)
class Fault:
    name: str
    parts: list[TurnPart]  # the backend's turn
    status: int  # of the non-streamed answer
    code: str
    streamed_first: str | None  # text a stream shows before the fault


FAULTS = [
    Fault(
        "HTTP 500",
        [raise_error(UpstreamError("model crashed", status=500))],
        502,
        "server_error",
        None,
    ),
    Fault(
        "HTTP 429",
        [raise_error(UpstreamRateLimitError("slow down", status=429, retry_after=2))],
        429,
        "rate_limit_exceeded",
        None,
    ),
    Fault(
        "garbage mid-stream", [text("Hel"), invalid_chunk("<html>oops")], 502, "server_error", "Hel"
    ),
    Fault("hang mid-stream", [text("Hel"), stall(30)], 504, "server_error", "Hel"),
    Fault("dropped mid-stream", [text("Hel"), break_stream()], 502, "server_error", "Hel"),
]
IDS = [fault.name for fault in FAULTS]


async def _stored(http: httpx2.AsyncClient, response_id: str) -> dict[str, Any]:
    reply = await http.get(f"/responses/{response_id}")
    assert reply.status_code == 200, reply.text
    stored: dict[str, Any] = reply.json()
    return stored


def _check_stored(stored: dict[str, Any], fault: Fault, *, streamed: bool) -> None:
    assert stored["status"] == "failed"
    assert stored["error"]["code"] == fault.code
    assert stored["error"]["message"]
    if not streamed or fault.streamed_first is None:
        assert stored["output"] == []  # a whole answer that never came: nothing to keep
        return
    [message] = stored["output"]
    assert message["status"] == "incomplete"
    assert message["content"][0]["text"] == fault.streamed_first


async def _healthy(http: httpx2.AsyncClient, scripted: ScriptedModel, model: str) -> None:
    scripted.add_turns("Still here.", "Still streaming.")
    reply = await http.post("/responses", json={"model": model, "input": "Hi"})
    assert reply.status_code == 200, reply.text
    assert reply.json()["output"][0]["content"][0]["text"] == "Still here."
    streamed = await http.post("/responses", json={"model": model, "input": "Hi", "stream": True})
    last = sse_events(streamed.text)[-1]
    assert last["type"] == "response.completed", last  # a failure says why


@pytest.fixture
async def http(live_url: str) -> Any:
    async with httpx2.AsyncClient(base_url=live_url, timeout=BOUND) as client:
        yield client


@pytest.mark.parametrize("fault", FAULTS, ids=IDS)
async def test_a_fault_answers_the_error_and_stores_the_response_failed(
    fault: Fault, scripted: ScriptedModel, backend: FakeBackend, http: httpx2.AsyncClient
) -> None:
    scripted.add_turn(*fault.parts)

    with anyio.fail_after(BOUND):
        reply = await http.post("/responses", json={"model": backend.model, "input": "Hi"})
        error = reply.json()["error"]
        [latest] = (await http.get("/responses", params={"limit": 1})).json()["data"]
        stored = await _stored(http, latest["id"])
        await _healthy(http, scripted, backend.model)

    assert reply.status_code == fault.status
    assert set(error) == {"message", "type", "param", "code"}
    assert error["code"] == fault.code
    assert error["type"] == ("rate_limit_error" if fault.status == 429 else "server_error")
    assert "inference backend" in error["message"]
    assert f"response {latest['id']} is stored as failed" in error["message"]
    if fault.status == 429:
        assert reply.headers["retry-after"] == "2"
    _check_stored(stored, fault, streamed=False)


@pytest.mark.parametrize("fault", FAULTS, ids=IDS)
async def test_a_fault_ends_the_stream_with_response_failed(
    fault: Fault, scripted: ScriptedModel, backend: FakeBackend, http: httpx2.AsyncClient
) -> None:
    scripted.add_turn(*fault.parts)
    body = {"model": backend.model, "input": "Hi", "stream": True}

    with anyio.fail_after(BOUND):
        reply = await http.post("/responses", json=body)
        events = sse_events(reply.text)
        stored = await _stored(http, events[0]["response"]["id"])
        await _healthy(http, scripted, backend.model)

    assert reply.status_code == 200
    assert reply.text.endswith("data: [DONE]\n\n")
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    failed = events[-1]
    assert failed["type"] == "response.failed"
    assert failed["response"]["error"]["code"] == fault.code
    _check_stored(stored, fault, streamed=True)
    assert stored["output"] == failed["response"]["output"]  # as the stream said
