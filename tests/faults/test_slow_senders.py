"""Clients that send slowly, hold many connections, or hang up mid-body, on raw sockets against a
real ``agentloom serve`` process with tiny ``[server]`` deadlines (server/connections.py).

A request head that never completes is cut (the connection closed, nothing answered); a body
that stalls, or trickles past its total deadline, gets a 408; past ``max_connections`` a new
connection is refused (a 503, or closed) while the open ones are still served; a client gone
mid-body is one debug line, no traceback. Ordinary requests are served meanwhile.
"""

from __future__ import annotations

import asyncio
import json
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
PAUSE = 0.05  # seconds between a slow client's bytes
DEADLINES = """
[server]
header_timeout = 0.5
body_idle_timeout = 0.5
body_timeout = 1.5
"""
SLOW_HEADS = 20
LINES = 1000  # blank lines a kept-alive connection sends at most (it is cut long before)
SLOW_BODIES = 10
MOST = 3  # max_connections
HELD = f"""
[server]
max_connections = {MOST}
header_timeout = 60
keep_alive_timeout = 60
"""
BODY_LENGTH = 200  # what the slow bodies declare (never all sent)
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


async def _slow_head(server: Server, started: anyio.Event) -> tuple[int, bytes]:
    """A request head sent a byte at a time, never finished: how many bytes went out before
    the server closed the connection, and what it answered (nothing, it is hoped)."""
    connection = await Connection.to(server)
    head = b"POST /v1/responses HTTP/1.1\r\nHost: agentloom\r\nX-Padding: " + b"x" * 2000
    try:
        for sent, byte in enumerate(head):
            if not await connection.send(bytes([byte])):
                return sent, b""
            started.set()
            answer = await connection.answer(PAUSE)
            if answer is not None:
                return sent + 1, answer
        return len(head), b""
    finally:
        connection.close()


async def _blank_lines(server: Server) -> tuple[int | None, int, bytes]:
    """A request answered, then blank lines (which begin no request) kept coming on the
    kept-alive connection: the first answer's status, how many lines went out before the
    server closed it, and what it sent then."""
    connection = await Connection.to(server)
    try:
        status = await connection.get("/health")
        for sent in range(LINES):
            if not await connection.send(b"\r\n"):
                return status, sent, b""
            answer = await connection.answer(PAUSE)
            if answer is not None:
                return status, sent + 1, answer
        return status, LINES, b""
    finally:
        connection.close()


async def _stalled_body(server: Server) -> bytes:
    """A whole head, then a tenth of the body it declares, then silence: the answer."""
    connection = await Connection.to(server)
    body = b'{"model": "m", "input": "' + b"x" * BODY_LENGTH + b'"}'
    try:
        await connection.send(connection.post("/responses", body) + body[:20])
        answer = await connection.answer(BOUND)
        assert answer is not None
        return answer
    finally:
        connection.close()


async def _trickled_body(server: Server) -> tuple[int, bytes]:
    """A whole head, then its body a byte at a time, each well within the idle deadline: how
    many body bytes went out before the server ended it, and its answer."""
    connection = await Connection.to(server)
    body = b" " * BODY_LENGTH
    try:
        await connection.send(connection.post("/responses", body))
        for sent in range(BODY_LENGTH):
            if not await connection.send(b" "):
                return sent, b""
            answer = await connection.answer(PAUSE)
            if answer is not None:
                return sent + 1, answer
        return BODY_LENGTH, b""
    finally:
        connection.close()


def _error(answer: bytes) -> tuple[int, dict[str, object]]:
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    error: dict[str, object] = json.loads(body)["error"]
    return status, error


async def test_slow_heads_are_cut_and_others_are_served(
    answering: None, backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    heads: list[tuple[int, bytes]] = []
    with anyio.fail_after(BOUND), served(backend, database_url, tmp_path, config=DEADLINES) as s:
        started = anyio.Event()
        blank = await _blank_lines(s)

        async def slow() -> None:
            heads.append(await _slow_head(s, started))

        async with anyio.create_task_group() as tasks:
            for _ in range(SLOW_HEADS):
                tasks.start_soon(slow)
            await started.wait()
            meanwhile = await _ordinary(s, backend.model)
        after = await _ordinary(s, backend.model)

    assert len(heads) == SLOW_HEADS
    for sent, answer in heads:
        assert answer == b""  # closed, not answered
        assert 0 < sent < 2000  # cut before the head was whole
    assert meanwhile == after == "Served."
    status, lines, answer = blank
    assert (status, answer) == (200, b"")
    assert lines < LINES


async def test_slow_bodies_get_408_and_others_are_served(
    answering: None, backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    stalled: list[bytes] = []
    trickled: list[tuple[int, bytes]] = []
    with anyio.fail_after(BOUND), served(backend, database_url, tmp_path, config=DEADLINES) as s:

        async def stall() -> None:
            stalled.append(await _stalled_body(s))

        async def trickle() -> None:
            trickled.append(await _trickled_body(s))

        async with anyio.create_task_group() as tasks:
            for _ in range(SLOW_BODIES):
                tasks.start_soon(stall)
                tasks.start_soon(trickle)
            meanwhile = await _ordinary(s, backend.model)
        after = await _ordinary(s, backend.model)

    assert len(stalled) == len(trickled) == SLOW_BODIES
    for answer in stalled:
        status, error = _error(answer)
        assert status == 408
        assert error["code"] == "request_timeout"
        assert error["message"] == "No byte of the request body arrived for 0.5 seconds."
    for sent, answer in trickled:
        assert sent < BODY_LENGTH  # ended before the body was whole: by its total deadline
        if answer:  # else the connection was closed (reset) before the 408 was read
            status, error = _error(answer)
            assert status == 408
            assert error["message"] == "The request body did not arrive within 1.5 seconds."
    assert meanwhile == after == "Served."


async def test_past_the_most_connections_new_ones_are_refused_open_ones_served(
    answering: None, backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    with anyio.fail_after(BOUND), served(backend, database_url, tmp_path, config=HELD) as s:
        held: list[Connection] = []

        async def one_more_held() -> bool:
            """A new connection, served (the server may still count the start-up check's
            connection for a moment: then it is refused, and tried again)."""
            connection = await Connection.to(s)
            if await connection.get("/health") == 200:
                held.append(connection)
                return True
            connection.close()
            return False

        for _ in range(MOST):
            await eventually(one_more_held, "a connection below the maximum to be served")
        over = await Connection.to(s)
        refused = await over.get("/health")
        over.close()

        body = json.dumps({"model": backend.model, "input": "Hi"}).encode()
        on_held = [await c.get("/health") for c in held]
        work = await held[1].exchange(held[1].post("/responses", body) + body)
        held.pop(0).close()  # one fewer: room for a new one
        await eventually(one_more_held, "a new connection to be served once one closed")
        for connection in held:
            connection.close()
        await eventually(lambda: _served(s, backend.model), "the openai client to be served")

    assert refused in (503, None)  # refused: an answer saying so, or closed
    assert on_held == [200] * MOST
    assert work == 200


async def _served(server: Server, model: str) -> bool:
    try:
        return await _ordinary(server, model) == "Served."
    except (openai.APIConnectionError, openai.APIStatusError):
        return False  # the held connections' closes not yet seen by the server


async def test_a_client_gone_mid_body_is_one_debug_line(
    answering: None, backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    with anyio.fail_after(BOUND):
        with served(backend, database_url, tmp_path, args=["--log-level", "debug"]) as s:
            for path, kind, body in _probes():
                connection = await Connection.to(s)
                await connection.send(connection.post(path, body, kind) + body[: len(body) // 2])
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


def _probes() -> list[tuple[str, str, bytes]]:
    """Where the probes hang up: halfway through a well-formed body, JSON and an upload's
    multipart. Whether the server reads the half sent before it sees the hang-up races the
    client's close, so the half is a valid start: either way the disconnect is all there is to
    answer (half a body of ``x``, no multipart, read first was a 400 and no line)."""
    request = json.dumps({"model": "m", "input": "x" * 100}).encode()
    upload = (
        b"--b\r\n"
        b'Content-Disposition: form-data; name="file"; filename="probe.txt"\r\n'
        b"Content-Type: text/plain\r\n\r\n" + b"x" * 100 + b"\r\n--b--\r\n"
    )
    return [("/responses", "application/json", request)] * PROBES + [
        ("/files", "multipart/form-data; boundary=b", upload)
    ]
