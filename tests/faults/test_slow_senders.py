"""Clients that hang up mid-body, on raw sockets against a real ``agentloom serve`` process: a
client gone mid-body is one debug line, no traceback. Ordinary requests are served meanwhile.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import openai
import pytest

from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import ScriptedModel
from agentloom.testing.backend import FakeBackend
from tests.e2e.test_restart import Server
from tests.faults.support import eventually, served

BOUND = 40.0  # seconds a test may take at most, its server's start included
PROBES = 3
GONE = "client disconnected during its request"


@pytest.fixture
def answering(scripted: ScriptedModel) -> None:
    def respond(request: ChatRequest) -> list[str]:
        return ["Served."]

    scripted.respond_with(respond)


@dataclass
class Connection:
    """A raw HTTP/1.1 connection to the server."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    @classmethod
    async def to(cls, server: Server) -> Connection:
        host, port = server.base_url.removeprefix("http://").split("/")[0].split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        return cls(reader, writer)

    async def send(self, data: bytes) -> bool:
        """Whether ``data`` could be sent (not: the server has closed the connection)."""
        try:
            self.writer.write(data)
            await self.writer.drain()
        except (ConnectionResetError, BrokenPipeError):
            return False
        return True

    async def answer(self, within: float) -> bytes | None:
        """What the server sent within ``within`` seconds (``b""``: closed, nothing sent);
        ``None``: nothing yet, the connection still open."""
        try:
            return await asyncio.wait_for(self.reader.read(4096), within)
        except TimeoutError:
            return None
        except ConnectionResetError:
            return b""

    async def get(self, path: str) -> int | None:
        """``GET path`` on this connection, kept alive: the answer's status, ``None`` if the
        connection was closed instead."""
        request = f"GET /v1{path} HTTP/1.1\r\nHost: agentloom\r\n\r\n".encode()
        return await self.exchange(request)

    @staticmethod
    def post(path: str, body: bytes, content_type: str = "application/json") -> bytes:
        """The head of a ``POST`` of ``body`` (which the caller sends, or not)."""
        return (
            f"POST /v1{path} HTTP/1.1\r\nHost: agentloom\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()

    async def exchange(self, request: bytes) -> int | None:
        if not await self.send(request):
            return None
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
            length = _content_length(head)
            await self.reader.readexactly(length)
        except (asyncio.IncompleteReadError, ConnectionResetError):
            return None
        return int(head.split(b" ", 2)[1])

    def close(self) -> None:
        self.writer.close()


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


@asynccontextmanager
async def sdk(server: Server) -> AsyncIterator[openai.AsyncOpenAI]:
    async with openai.AsyncOpenAI(
        base_url=server.base_url, api_key="unused", max_retries=0, timeout=20.0
    ) as client:
        yield client


async def _ordinary(server: Server, model: str) -> str:
    async with sdk(server) as client:
        response = await client.responses.create(model=model, input="Hi")
    return response.output_text


async def test_a_client_gone_mid_body_is_one_debug_line(
    answering: None, backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    with anyio.fail_after(BOUND):
        with served(backend, database_url, tmp_path, args=["--log-level", "debug"]) as s:
            for path, kind in _probes():
                connection = await Connection.to(s)
                body = b"x" * 100
                await connection.send(connection.post(path, body, kind) + body[:10])
                connection.close()

            async def logged() -> bool:
                return s.output().count(GONE) >= len(_probes())

            await eventually(logged, "each disconnect to be logged")
            served_after = await _ordinary(s, backend.model)
            log = s.output()

    assert log.count(GONE) == len(_probes())  # once each
    assert f"DEBUG agentloom.server.errors: {GONE}: POST /v1/responses" in log
    assert f"{GONE}: POST /v1/files" in log
    for noise in ("Traceback", "unhandled error", "Exception in ASGI application", "ERROR"):
        assert noise not in log
    assert served_after == "Served."


def _probes() -> list[tuple[str, str]]:
    """Where the probes hang up: JSON bodies, and an upload's multipart body."""
    return [("/responses", "application/json")] * PROBES + [
        ("/files", "multipart/form-data; boundary=b")
    ]
