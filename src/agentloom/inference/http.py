"""A small keep-alive HTTP/1.1 client for the one request on the hot path: a streamed POST.

The ``openai`` SDK over httpx costs about 1 ms of CPU per streamed chat completion before the
backend has done anything (measured: SDK 0.98 ms, bare httpx 0.55 ms, this client 0.12 ms). On a
server whose whole budget is a few milliseconds, that is most of it. This client does only what
that request needs: a pool of keep-alive connections to one origin (TLS when ``https``), a JSON
body, a response read as ``Content-Length``, chunked or until close, timeouts on connect and on
every read. Anything fancier (proxies, HTTP/2) goes through the SDK instead. The provider's
token-counting requests (a JSON answer each, see :mod:`.counting`) share its connections.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

from agentloom.frozen import frozen
from agentloom.inference.deadlines import Within
from agentloom.redact import redact_url
from agentloom.tls import client_context

__all__ = [
    "HTTPConnectError",
    "HTTPError",
    "HTTPProtocolError",
    "HTTPTimeout",
    "Origin",
    "Pool",
    "Response",
    "iter_sse_data",
]

_HEAD_LIMIT: Final = 64 * 1024
_READ_SIZE: Final = 64 * 1024
_MAX_IDLE: Final = 64


class HTTPError(Exception):
    """The exchange failed below HTTP semantics (no status to report)."""


class HTTPConnectError(HTTPError):
    """The connection could not be opened."""


class HTTPTimeout(HTTPError):
    """Connecting, or waiting for the next bytes, took longer than allowed."""


class HTTPProtocolError(HTTPError):
    """The peer closed the connection early or sent something that is not HTTP/1.1."""


@frozen
class Origin:
    """Where requests go: scheme, host, port and the base path of every request."""

    scheme: str
    host: str
    port: int
    base_path: str

    @classmethod
    def parse(cls, base_url: str) -> Origin:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {redact_url(base_url)!r}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return cls(parts.scheme, parts.hostname, port, parts.path.rstrip("/"))

    @property
    def host_header(self) -> str:
        default = 443 if self.scheme == "https" else 80
        host = f"[{self.host}]" if ":" in self.host else self.host  # an IPv6 literal
        return host if self.port == default else f"{host}:{self.port}"


@dataclass(slots=True)
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    reused: bool = False

    def close(self) -> None:
        self.writer.close()


@dataclass(slots=True)
class Response:
    """A response whose body has not been read yet.

    The body is read in large blocks into a buffer of its own and the chunked framing parsed
    from there, so a streamed body costs one timed read per network read, not one per chunk.
    """

    status: int
    headers: dict[str, str]
    _conn: _Connection
    _read_timeout: float
    _mode: str = field(default="close")  # "length", "chunked" or "close"
    _remaining: int = 0
    _buf: bytearray = field(default_factory=bytearray)
    complete: bool = False
    _last_chunk: bool = False  # chunked: the last chunk (size 0) was read

    async def iter_bytes(self) -> AsyncIterator[bytes]:
        """The body as it arrives."""
        while (piece := await self._piece()) is not None:
            yield piece

    async def read(self, limit: int = 1024 * 1024) -> bytes:
        """The whole body (at most ``limit`` bytes are kept); no generator of its own."""
        body = bytearray()
        while (piece := await self._piece()) is not None:
            if len(body) < limit:
                body += piece[: limit - len(body)]
        return bytes(body)

    async def _piece(self) -> bytes | None:
        """The next piece of the body as it arrives; ``None`` at its end (:attr:`complete`
        then says whether the connection can be kept)."""
        if self._mode == "chunked":
            return await self._chunks()
        if self._mode == "length":
            if self._remaining <= 0:
                self.complete = True
                return None
            piece = await self._read()
            if not piece:
                raise HTTPProtocolError("the connection closed before the body was complete")
            piece = piece[: self._remaining]
            self._remaining -= len(piece)
            return piece
        return await self._read() or None

    async def _chunks(self) -> bytes | None:
        """The data of the chunks each network read completed, joined: a stream whose events
        arrive together is handled once, not once per chunk."""
        buf = self._buf
        while not self._last_chunk:
            data, self._last_chunk = _take_chunks(buf)
            if data:
                return data
            if not self._last_chunk:
                await self._fill()
        if not self.complete:
            while await self._line():  # the trailer section ends with an empty line
                pass
            self.complete = True
        return None

    async def _line(self) -> bytes:
        buf = self._buf
        while (end := buf.find(b"\r\n")) < 0:
            await self._fill()
        line = bytes(buf[:end])
        del buf[: end + 2]
        return line

    async def _fill(self) -> None:
        piece = await self._read()
        if not piece:
            raise HTTPProtocolError("the connection closed before the body was complete")
        self._buf += piece

    async def _read(self) -> bytes:
        if self._buf and self._mode != "chunked":
            piece = bytes(self._buf)
            self._buf.clear()
            return piece
        try:
            with Within(self._read_timeout):
                return await self._conn.reader.read(_READ_SIZE)
        except TimeoutError as exc:
            raise HTTPTimeout(f"no data for {self._read_timeout:g}s") from exc
        except OSError as exc:
            raise HTTPProtocolError(f"the connection broke: {exc or type(exc).__name__}") from exc


def _take_chunks(buf: bytearray) -> tuple[bytes, bool]:
    """The data of the complete chunks at the start of ``buf`` (taken out of it), and whether
    the last chunk (size 0) was reached; its size line is taken, its trailer is not. The
    buffer is cut once, whatever number of chunks it held (a stream's often come together)."""
    pieces: list[bytearray] = []
    taken = 0
    ended = False
    while (end := buf.find(b"\r\n", taken)) >= 0:
        line = bytes(buf[taken:end])
        try:
            size = int(line.split(b";", 1)[0], 16)
        except ValueError as exc:
            raise HTTPProtocolError(f"bad chunk size line {line[:40]!r}") from exc
        if size == 0:
            taken, ended = end + 2, True
            break
        start = end + 2
        if len(buf) < start + size + 2:
            break
        pieces.append(buf[start : start + size])
        taken = start + size + 2
    del buf[:taken]
    return b"".join(pieces), ended


class Pool:
    """Keep-alive connections to one :class:`Origin`."""

    def __init__(
        self,
        origin: Origin,
        *,
        connect_timeout: float,
        read_timeout: float,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.origin = origin
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self._headers = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self._idle: list[_Connection] = []
        self._ssl = client_context() if origin.scheme == "https" else None

    @asynccontextmanager
    async def post(self, path: str, body: bytes, *, root: bool = False) -> AsyncIterator[Response]:
        """Send ``body`` as JSON to ``path`` under the base path (from the server root when
        ``root``); yields the response with its body unread.

        The connection goes back to the pool only if the body was read to its end.
        """
        request = self._request(path if root else self.origin.base_path + path, body)
        response = await self._exchange(request)
        try:
            yield response
        finally:
            self._release(response)

    async def fetch(
        self, path: str, body: bytes, *, root: bool = False, limit: int = 1024 * 1024
    ) -> tuple[Response, bytes]:
        """:meth:`post` with the whole body read (at most ``limit`` bytes kept): the response
        and its body, the connection back in the pool (a whole answer's way, without a
        context manager's generator)."""
        request = self._request(path if root else self.origin.base_path + path, body)
        response = await self._exchange(request)
        try:
            return response, await response.read(limit)
        finally:
            self._release(response)

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def _request(self, target: str, body: bytes) -> bytes:
        head = (
            f"POST {target} HTTP/1.1\r\n"
            f"Host: {self.origin.host_header}\r\n"
            "Content-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n"
            f"{self._headers}\r\n"
        )
        return head.encode("latin-1") + body

    async def _exchange(self, request: bytes) -> Response:
        conn = await self._acquire()
        try:
            return await self._send(conn, request)
        except HTTPProtocolError:
            conn.close()
            if not conn.reused:
                raise
        except BaseException:  # a timeout, or the caller cancelled: the connection is spent
            conn.close()
            raise
        # A kept-alive connection the backend had already closed: one retry on a fresh one.
        conn = await self._connect()
        try:
            return await self._send(conn, request)
        except BaseException:
            conn.close()
            raise

    async def _send(self, conn: _Connection, request: bytes) -> Response:
        conn.writer.write(request)
        try:
            with Within(self.read_timeout):
                await conn.writer.drain()
                head = await conn.reader.readuntil(b"\r\n\r\n")
        except TimeoutError as exc:
            conn.close()
            raise HTTPTimeout(f"no answer within {self.read_timeout:g}s") from exc
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError) as exc:
            raise HTTPProtocolError(f"the connection broke: {exc or type(exc).__name__}") from exc
        return self._response(conn, head)

    def _response(self, conn: _Connection, head: bytes) -> Response:
        lines = head.decode("latin-1").split("\r\n")
        status_line = lines[0].split(" ", 2)
        if len(status_line) < 2 or not status_line[0].startswith("HTTP/1."):
            conn.close()
            raise HTTPProtocolError(f"not an HTTP/1.1 status line: {lines[0][:80]!r}")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        response = Response(int(status_line[1]), headers, conn, self.read_timeout)
        if "chunked" in headers.get("transfer-encoding", "").lower():
            response._mode = "chunked"
        elif "content-length" in headers:
            response._mode = "length"
            response._remaining = int(headers["content-length"])
        return response

    async def _acquire(self) -> _Connection:
        while self._idle:
            conn = self._idle.pop()
            if not conn.reader.at_eof() and not conn.writer.is_closing():
                conn.reused = True
                return conn
            conn.close()
        return await self._connect()

    async def _connect(self) -> _Connection:
        origin = self.origin
        try:
            async with asyncio.timeout(self.connect_timeout):
                reader, writer = await asyncio.open_connection(
                    origin.host, origin.port, ssl=self._ssl, limit=_HEAD_LIMIT
                )
        except TimeoutError as exc:
            raise HTTPTimeout(f"could not connect within {self.connect_timeout:g}s") from exc
        except (OSError, ssl.SSLError) as exc:
            raise HTTPConnectError(str(exc) or type(exc).__name__) from exc
        return _Connection(reader, writer)

    def _release(self, response: Response) -> None:
        conn = response._conn
        keep = response.complete and response.headers.get("connection", "").lower() != "close"
        if keep and len(self._idle) < _MAX_IDLE and not conn.writer.is_closing():
            conn.reused = False
            self._idle.append(conn)
        else:
            conn.close()


async def iter_sse_data(body: AsyncIterator[bytes]) -> AsyncIterator[str]:
    """The ``data`` of each server-sent event in ``body`` (multi-line data joined by newlines).

    Comments, ``event:``/``id:``/``retry:`` fields and events without data are skipped.
    """
    async for batch in iter_sse_batches(body):
        for data in batch:
            yield data


async def iter_sse_batches(body: AsyncIterator[bytes]) -> AsyncIterator[list[str]]:
    """:func:`iter_sse_data`, a list at a time: the events completed by each piece of ``body``."""
    buffer = b""
    data: list[str] = []
    async for piece in body:
        buffer += piece
        *lines, buffer = buffer.split(b"\n")
        batch: list[str] = []
        for raw in lines:
            line = raw.rstrip(b"\r").decode("utf-8")
            if not line:
                if data:
                    batch.append("\n".join(data))
                    data = []
            elif line.startswith("data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(" ") else value)
        if batch:
            yield batch
    tail = buffer.rstrip(b"\r").decode("utf-8")
    if tail.startswith("data:"):
        data.append(tail[6:] if tail[5:6] == " " else tail[5:])
    if data:
        yield ["\n".join(data)]
