"""Servers on loopback that take a request and never finish answering it: what a deadline is
for. Raw sockets (``asyncio.start_server``), so nothing in between answers for them.

- ``silent``: reads the request, sends nothing.
- ``sse_elsewhere``: a POST is a 405 (no Streamable HTTP: the client tries HTTP+SSE); a GET
  opens an event stream whose ``endpoint`` event names another origin, then nothing more.
- ``sse_no_endpoint``: a POST is a 405; a GET opens an event stream that never sends its
  ``endpoint`` event.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Literal

Mode = Literal["silent", "sse_elsewhere", "sse_no_endpoint"]

_NOT_ALLOWED = b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
_EVENTS = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\r\n"
_ELSEWHERE = b"event: endpoint\r\ndata: http://elsewhere.invalid:9/messages?session_id=1\r\n\r\n"


@dataclass
class Silent:
    url: str
    taken: asyncio.Event = field(default_factory=asyncio.Event)  # set at the first one held


@asynccontextmanager
async def silent_server(mode: Mode = "silent", path: str = "/") -> AsyncIterator[Silent]:
    """A server in ``mode`` at ``http://127.0.0.1:PORT{path}``; its connections closed on the
    way out."""
    writers: list[asyncio.StreamWriter] = []
    state = Silent(url="")

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        if mode != "silent" and head.startswith(b"POST"):
            writer.write(_NOT_ALLOWED)
            writer.close()
            return
        if mode != "silent":
            writer.write(_EVENTS + (_ELSEWHERE if mode == "sse_elsewhere" else b""))
        state.taken.set()
        with contextlib.suppress(ConnectionError):
            await reader.read()  # until the client gives up and closes

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    state.url = f"http://127.0.0.1:{port}{path}"
    try:
        yield state
    finally:
        server.close()
        for writer in writers:
            writer.close()
