"""A minimal HTTP/1.1 keep-alive client: the benchmark's load generator.

General clients (httpx, the openai SDK) spend more CPU per request than the server under test
saves; on a 2-core machine that would hide the server's cost behind the client's. This one writes
a prebuilt request and reads a ``Content-Length`` or chunked body, nothing more.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass


class ProtocolError(RuntimeError):
    """The server answered something this client does not understand."""


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    body: bytes

    def json(self) -> dict[str, object]:
        value = json.loads(self.body)
        if not isinstance(value, dict):
            raise ProtocolError(f"expected a JSON object, got {self.body[:200]!r}")
        return value


class Connection:
    """One keep-alive connection; requests on it run one after another."""

    def __init__(self, host: str, port: int, *, headers: dict[str, str] | None = None) -> None:
        self.host = host
        self.port = port
        # sent with every request (an Authorization header, say), encoded once
        self._extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def __aenter__(self) -> Connection:
        self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._writer is not None:
            self._writer.close()
            await self._writer.wait_closed()

    async def post(self, path: str, payload: object) -> Reply:
        return await self.post_raw(path, json.dumps(payload).encode())

    async def post_raw(self, path: str, body: bytes) -> Reply:
        """A POST of ``body`` as it is (prebuilt once for large payloads)."""
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\n{self._extra}"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        return await self._exchange(head.encode() + body)

    async def post_timed(self, path: str, payload: object, marker: bytes) -> tuple[Reply, float]:
        """:meth:`post`, and the seconds from sending until a body chunk held ``marker`` (the
        whole exchange's when none did): a streamed reply's time to its first token."""
        body = json.dumps(payload).encode()
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\n{self._extra}"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        reader, writer = self._streams()
        start = time.perf_counter()
        writer.write(head.encode() + body)
        status, headers = await _read_head(reader)
        if headers.get("transfer-encoding") != "chunked":
            reply = Reply(status, await reader.readexactly(int(headers.get("content-length", "0"))))
            return reply, time.perf_counter() - start
        seen: list[float] = []

        def arrived(chunk: bytes) -> None:
            if not seen and marker in chunk:
                seen.append(time.perf_counter() - start)

        reply = Reply(status, await _read_chunked(reader, arrived))
        return reply, seen[0] if seen else time.perf_counter() - start

    async def get(self, path: str) -> Reply:
        head = f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\n{self._extra}\r\n"
        return await self._exchange(head.encode())

    async def delete(self, path: str) -> Reply:
        head = f"DELETE {path} HTTP/1.1\r\nHost: {self.host}\r\n{self._extra}\r\n"
        return await self._exchange(head.encode())

    async def _exchange(self, request: bytes) -> Reply:
        reader, writer = self._streams()
        writer.write(request)
        status, headers = await _read_head(reader)
        if headers.get("transfer-encoding") == "chunked":
            return Reply(status, await _read_chunked(reader))
        length = int(headers.get("content-length", "0"))
        return Reply(status, await reader.readexactly(length))

    def _streams(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._reader is None or self._writer is None:
            raise RuntimeError("use `async with Connection(...)`")
        return self._reader, self._writer


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    raw = await reader.readuntil(b"\r\n\r\n")
    lines = raw.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[1].isdigit():
        raise ProtocolError(f"bad status line {lines[0]!r}")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name:
            headers[name.strip().lower()] = value.strip()
    return int(parts[1]), headers


async def _read_chunked(
    reader: asyncio.StreamReader, arrived: Callable[[bytes], None] | None = None
) -> bytes:
    body = bytearray()
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return bytes(body)
        chunk = (await reader.readexactly(size + 2))[:-2]
        if arrived is not None:
            arrived(chunk)
        body += chunk
