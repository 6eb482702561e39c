"""One connection to an MCP server per response, opened on first use and closed with the
response (its exit stack). Streamable HTTP first; a server that refuses it is tried with the
older HTTP+SSE transport. A declared stdio server is started as a subprocess (see
:mod:`.stdio`). Failures become :class:`McpFailure` with a readable message.

The ``mcp`` SDK (~1 s of import) is imported by the first connection, not with the server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from contextlib import AsyncExitStack, contextmanager
from typing import TYPE_CHECKING, Literal

import anyio
import httpx2

from agentloom.api.integers import INT64_MAX
from agentloom.frozen import frozen
from agentloom.redact import redact_url, redact_urls
from agentloom.tls import client_context
from agentloom.tools.mcp.stdio import StdioAddress, stdio_streams

if TYPE_CHECKING:
    import mcp_types
    from mcp import Client
    from mcp.client._transport import Transport

FailureKind = Literal["mcp_protocol_error", "http_error"]
TransportKind = Literal["streamable_http", "sse", "stdio"]
_EXPECTED = (OSError, httpx2.HTTPError, TimeoutError)  # and the SDK's MCPError
_MAX_PAGES = 20
_INTERNAL_ERROR = -32603  # JSON-RPC's code for an error of the server's own
_SLACK = 1.0  # the SDK's own request timeouts come after ours, which name what timed out


class McpFailure(Exception):
    """An MCP server could not be reached or answered with an error."""

    def __init__(self, kind: FailureKind, code: int, message: str) -> None:
        message = redact_urls(message)  # a library's error may quote the URL, credentials too
        super().__init__(message)
        self.kind, self.code, self.message = kind, code, message


@frozen
class ServerAddress:
    url: str
    headers: Mapping[str, str]  # ``Authorization`` included: never logged
    connect_timeout: float
    call_timeout: float


class Connection:
    """A lazily opened client session, reused for every listing and call of a response."""

    def __init__(self, address: ServerAddress | StdioAddress, stack: AsyncExitStack) -> None:
        self._address = address
        self._stack = stack
        self._client: Client | None = None
        self._lock = anyio.Lock()

    async def list_tools(self) -> list[mcp_types.Tool]:
        """Every page of the listing, all within ``connect_timeout``."""
        client = await self._connected()
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        seconds = self._address.connect_timeout
        with _failures(), self._deadline("tools/list", seconds):
            for _ in range(_MAX_PAGES):
                page = await client.list_tools(cursor=cursor)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
        return tools

    async def call(self, name: str, arguments: dict[str, object]) -> mcp_types.CallToolResult:
        client = await self._connected()
        seconds = self._address.call_timeout
        with _failures(), self._deadline(f"the call of '{name}'", seconds):
            return await client.call_tool(name, arguments, read_timeout_seconds=seconds + _SLACK)

    async def _connected(self) -> Client:
        async with self._lock:
            if self._client is None:
                _import_sdk()  # its ~1 s of first import is not the server's time
                seconds = self._address.connect_timeout
                # asyncio's timeout, not a cancel scope: the client's task groups entered
                # inside outlive it, which anyio's nesting rule forbids a scope
                try:
                    async with asyncio.timeout(seconds) as scope:
                        self._client = await self._connect()
                except TimeoutError:
                    if not scope.expired():
                        raise
                    raise self._timed_out("initialize", seconds) from None
            return self._client

    @contextmanager
    def _deadline(self, what: str, seconds: float) -> Iterator[None]:
        """``what`` (one exchange, no task group left open) within ``seconds``."""
        with anyio.move_on_after(seconds) as scope:
            yield
        if scope.cancelled_caught:
            raise self._timed_out(what, seconds)

    def _timed_out(self, what: str, seconds: float) -> McpFailure:
        return McpFailure(
            "http_error", 504, f"{_named(self._address)} did not answer {what} within {seconds:g} s"
        )

    async def _connect(self) -> Client:
        if isinstance(self._address, StdioAddress):
            return await self._enter("stdio")
        try:
            return await self._enter("streamable_http")
        except McpFailure as first:
            if first.kind == "http_error" and first.code == 502:
                raise  # nothing answered: no point trying the other transport
            try:
                return await self._enter("sse")
            except McpFailure:
                raise first from None

    async def _enter(self, transport: TransportKind) -> Client:
        from mcp import Client

        address = self._address
        async with AsyncExitStack() as attempt:
            streams = await _transport(address, transport, attempt)
            client = Client(
                streams,
                cache=None,
                read_timeout_seconds=address.connect_timeout + _SLACK,
                mode="legacy",
            )
            with _failures():
                await attempt.enter_async_context(client)
            self._stack.push_async_exit(attempt.pop_all())
            return client


async def _transport(
    address: ServerAddress | StdioAddress,
    kind: TransportKind,
    attempt: AsyncExitStack,
) -> Transport:
    if isinstance(address, StdioAddress):  # declared stdio servers: the only kind for them
        return stdio_streams(address)
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client

    if kind == "sse":
        return sse_client(
            address.url,
            headers=dict(address.headers),
            timeout=address.connect_timeout + _SLACK,
            sse_read_timeout=address.call_timeout + 30,
        )
    # httpx's own timeouts after ours too: at the same second, a loaded host's loop may run
    # either first, and only ours says which exchange timed out
    timeout = httpx2.Timeout(address.connect_timeout + _SLACK, read=address.call_timeout + _SLACK)
    http = httpx2.AsyncClient(
        verify=client_context(), headers=dict(address.headers), timeout=timeout
    )
    await attempt.enter_async_context(http)
    return streamable_http_client(address.url, http_client=http)


def _import_sdk() -> None:
    import mcp.client.sse
    import mcp.client.streamable_http  # noqa: F401


def _named(address: ServerAddress | StdioAddress) -> str:
    """The server, for messages: its URL without credentials, query or fragment."""
    if isinstance(address, StdioAddress):
        return f"the MCP server '{address.label}'"
    return f"the MCP server at {redact_url(address.url)}"


@contextmanager
def _failures() -> Iterator[None]:
    """Turns the errors of a remote MCP server into :class:`McpFailure` (others pass)."""
    try:
        yield
    except (Exception, BaseExceptionGroup) as exc:
        from mcp.shared.exceptions import MCPError

        leaf = _leaf(exc)
        if not isinstance(leaf, (*_EXPECTED, MCPError)):
            raise
        raise _failure(leaf) from None


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _rpc_code(code: int) -> int:
    """A JSON-RPC error code as an item holds it: past 64 bits (no server means that) the
    protocol's "internal error"."""
    return code if -INT64_MAX - 1 <= code <= INT64_MAX else _INTERNAL_ERROR


def _failure(exc: BaseException) -> McpFailure:
    from mcp.shared.exceptions import MCPError

    if isinstance(exc, MCPError):
        return McpFailure("mcp_protocol_error", _rpc_code(exc.code), exc.message)
    if isinstance(exc, TimeoutError):
        return McpFailure("http_error", 504, "the MCP server did not answer in time")
    if isinstance(exc, httpx2.HTTPStatusError):
        status = exc.response.status_code
        return McpFailure("http_error", status, f"the MCP server answered HTTP {status}")
    if isinstance(exc, httpx2.TimeoutException):
        return McpFailure("http_error", 504, "the MCP server did not answer in time")
    return McpFailure("http_error", 502, f"the MCP server could not be reached ({exc})")
