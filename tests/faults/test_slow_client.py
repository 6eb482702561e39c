"""A client that reads a large stream very slowly, from a real ``agentloom serve`` process.

The server applies backpressure all the way: uvicorn's send waits on the socket's flow
control, the loop waits on that send before it reads the next chunk from the backend, and the
backend waits on its own socket in turn. So what the backend has produced stays within the
kernel's socket buffers of what the client has read (not the 200 MB it could produce), the
server's memory does not grow with the answer, and other clients are served meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import anyio
import httpx2

from agentloom.inference.base import ChatRequest, TextDelta
from agentloom.inference.scripted import ScriptedModel, ScriptItem, TurnPart
from agentloom.testing.backend import FakeBackend
from tests.faults.support import Resources, eventually, served, sse_events

MIB = 1024 * 1024
PIECE = 1000  # characters a delta
PIECES = 200_000  # 200 MB of text, were it all produced
SLOW_READ = 4096  # bytes the slow client reads at a time
SLOW_PAUSE = 0.05  # seconds between its reads
SLOW_FOR = 3.0  # seconds it reads for
IN_FLIGHT = 48 * MIB  # socket buffers along the way: backend -> server -> client, at most
RSS_GROWTH = 50 * MIB
BOUND = 60.0


class Produced:
    """Counts what the backend produced of the long answer."""

    def __init__(self) -> None:
        self.bytes = 0

    async def answer(self) -> AsyncIterator[ScriptItem]:
        for _ in range(PIECES):
            self.bytes += PIECE
            yield TextDelta("x" * PIECE)


def _script(model: ScriptedModel, produced: Produced) -> None:
    def respond(request: ChatRequest) -> Sequence[TurnPart] | AsyncIterator[ScriptItem]:
        if request.messages[-1].content == "Tell me everything":
            return produced.answer()
        return ["A quick answer."]

    model.respond_with(respond)


async def _slow_reader(base_url: str, model: str, read: list[int], stop: anyio.Event) -> None:
    """POST a streamed response on a socket with a small receive buffer; read a little at a
    time until ``stop``; count what was read in ``read``."""
    host, port = base_url.removeprefix("http://").split("/")[0].split(":")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SLOW_READ)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
    reader, writer = await asyncio.open_connection(sock=sock, limit=SLOW_READ)
    body = json.dumps({"model": model, "input": "Tell me everything", "stream": True}).encode()
    writer.write(
        b"POST /v1/responses HTTP/1.1\r\nHost: agentloom\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    try:
        while not stop.is_set():
            chunk = await reader.read(SLOW_READ)
            assert chunk, "the server closed the slow client's stream"
            read[0] += len(chunk)
            await anyio.sleep(SLOW_PAUSE)
    finally:
        writer.close()


async def test_a_slow_reader_holds_back_the_stream_and_blocks_no_one(
    scripted: ScriptedModel, backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    produced = Produced()
    _script(scripted, produced)
    read = [0]
    stop = anyio.Event()
    with anyio.fail_after(BOUND), served(backend, database_url, tmp_path) as server:
        before = Resources.of(server.process.pid)
        async with httpx2.AsyncClient(base_url=server.base_url, timeout=20.0) as http:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(_slow_reader, server.base_url, backend.model, read, stop)
                during_slow = await _others(http, backend.model)
                await anyio.sleep(SLOW_FOR)
                held = Resources.of(server.process.pid)
                backlog = produced.bytes - read[0]
                stop.set()  # the slow client hangs up
            at_hang_up = produced.bytes

            async def cancelled() -> bool:
                listed = (await http.get("/responses", params={"limit": 100})).json()["data"]
                return [r["status"] for r in listed if r["status"] != "completed"] == ["cancelled"]

            await eventually(cancelled, "the slow client's response to be stored cancelled")
            after = await _others(http, backend.model)

    assert read[0] > 0
    assert backlog < IN_FLIGHT, f"{produced.bytes / MIB:.0f} MiB produced, {read[0]} B read"
    assert held.rss_bytes - before.rss_bytes < RSS_GROWTH
    assert during_slow == after == ["A quick answer."] * 6
    # the backend's answer was closed with the response, not read to its end
    assert produced.bytes - at_hang_up < IN_FLIGHT


async def _others(http: httpx2.AsyncClient, model: str) -> list[str]:
    """Other clients' requests, three whole and three streamed: what each answered."""
    answers = []
    for stream in (False, True) * 3:
        body = {"model": model, "input": "Hi", "stream": stream}
        reply = await http.post("/responses", json=body)
        final = sse_events(reply.text)[-1]["response"] if stream else reply.json()
        answers.append(final["output"][0]["content"][0]["text"])
    return answers
