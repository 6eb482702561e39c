"""The coalescing transport: writes of one event-loop step leave as one; none waits longer.

The server's socket tests (tests/e2e, tests/clients) run on it too (``agentloom.testing.serving``
serves with the same protocol as ``agentloom serve``); these pin down its own rules against a
transport that records what reaches it.
"""

from __future__ import annotations

import asyncio
import json

import httpx2

from agentloom.server.coalesce import CoalescingTransport
from agentloom.testing.serving import serve_async


class Recorded(asyncio.Transport):
    """The socket's side: what was written to it, write by write."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True


async def test_writes_of_one_step_leave_together() -> None:
    sent = Recorded()
    transport = CoalescingTransport(sent, asyncio.get_running_loop())

    transport.write(b"HTTP/1.1 200 OK\r\n\r\n")
    transport.write(b"{}")
    assert sent.writes == []  # held until the step ends
    await asyncio.sleep(0)

    assert sent.writes == [b"HTTP/1.1 200 OK\r\n\r\n{}"]


async def test_a_write_waits_for_no_later_step() -> None:
    sent = Recorded()
    transport = CoalescingTransport(sent, asyncio.get_running_loop())

    transport.write(b"head")
    await asyncio.sleep(0)
    transport.write(b"event 1")
    await asyncio.sleep(0)

    assert sent.writes == [b"head", b"event 1"]


async def test_close_sends_what_is_held_first() -> None:
    sent = Recorded()
    transport = CoalescingTransport(sent, asyncio.get_running_loop())

    transport.write(b"last words")
    transport.close()

    assert sent.writes == [b"last words"]
    assert sent.closed


async def test_writes_to_a_closed_connection_are_dropped() -> None:
    sent = Recorded()
    transport = CoalescingTransport(sent, asyncio.get_running_loop())
    sent.closed = True  # the peer went away

    transport.write(b"nobody reads this")
    await asyncio.sleep(0)

    assert sent.writes == []


async def test_a_served_app_answers_whole_replies_over_keep_alive() -> None:
    """Over a real socket: replies of every length on one connection, each complete."""

    async def app(scope: dict[str, object], receive: object, send: object) -> None:
        assert callable(send)
        if scope["type"] != "http":
            return
        size = int(str(scope["path"]).rsplit("/", 1)[-1])
        body = json.dumps({"x": "y" * size}).encode()
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async with serve_async(app, lifespan=False) as base_url, httpx2.AsyncClient() as http:
        for size in (0, 1, 100, 70_000):  # one connection, kept alive
            reply = await http.get(f"{base_url}/size/{size}")
            assert reply.status_code == 200
            assert reply.json() == {"x": "y" * size}
