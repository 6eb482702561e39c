"""Any MCP server's tools as agent tools, over the server's MCP client
(:mod:`agentloom.tools.mcp.client`).

```python
tools = await mcp_tools("http://127.0.0.1:9000/mcp")      # or a declared McpServerSettings
...                                                       # one Tool per MCP tool
await tools[0].aclose()                                   # closes the shared connection
```

One connection per server, shared by its tools and closed by any of their ``aclose()``. It lives
on a private event loop in a thread of its own, opened and closed by one task there: the ``mcp``
client's task groups must be left by the task that entered them, while an agent's tool calls
run in whatever task its executor chooses (concurrent calls included). A call's arguments go
to the server as given; the text parts of its result are joined (else its structured content
as JSON). A failed call, or a result flagged ``isError``, is a :class:`ToolError` the model
sees. ``declared_mcp_tools`` lists a ``[[mcp.servers]]`` server synchronously, for
:func:`agentloom.agents.builders.build_tools` (``"mcp:<label>"``); it blocks while it connects.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import Future
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, TypeVar

from agentloom.agents.base import AgentContext
from agentloom.agents.tools.base import Tool, ToolError
from agentloom.config import McpServerSettings, McpSettings
from agentloom.errors import AgentloomError, InvalidRequestError
from agentloom.json_types import JSONObject
from agentloom.tools.mcp.client import Connection, McpFailure, ServerAddress
from agentloom.tools.mcp.schema import normalise
from agentloom.tools.mcp.stdio import StdioAddress

if TYPE_CHECKING:
    import mcp_types

__all__ = [
    "McpAgentTool",
    "McpSession",
    "McpToolsError",
    "declared_mcp_tools",
    "mcp_tools",
    "server_address",
]

T = TypeVar("T")
Address = ServerAddress | StdioAddress


class McpToolsError(AgentloomError):
    """An MCP server's tools could not be listed (unreachable, refused, protocol error)."""


class _Worker:
    """A private event loop in a thread; its owner task connects (listing the tools), waits
    for ``close()``, then disconnects. Calls run as other tasks on the same loop."""

    def __init__(self, address: Address) -> None:
        self.address = address
        self.listed: Future[list[mcp_types.Tool]] = Future()
        self._connection: Connection | None = None
        self._stop = asyncio.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="agentloom-mcp", daemon=True)
        self._thread.start()
        self._owner = asyncio.run_coroutine_threadsafe(self._own(), self._loop)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_forever()
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
        finally:
            self._loop.close()

    async def _own(self) -> None:
        try:
            async with AsyncExitStack() as stack:
                connection = Connection(self.address, stack)
                tools = await connection.list_tools()
                self._connection = connection
                self.listed.set_result(tools)
                await self._stop.wait()
        except Exception as exc:
            if not self.listed.done():
                self.listed.set_exception(exc)
            if not isinstance(exc, McpFailure):
                raise

    def submit(self, work: Callable[[Connection], Coroutine[Any, Any, T]]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(self._connected(work), self._loop)

    async def _connected(self, work: Callable[[Connection], Coroutine[Any, Any, T]]) -> T:
        await _wait(self.listed)
        assert self._connection is not None
        return await work(self._connection)

    def close(self, timeout: float) -> None:
        """Disconnect (in the owner task), cancel calls still running, end the thread."""
        try:
            self._loop.call_soon_threadsafe(self._stop.set)
            self._owner.result(timeout)
        finally:
            asyncio.run_coroutine_threadsafe(_cancel_others(), self._loop).result(timeout)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout)


async def _wait(future: Future[T]) -> T:
    """``future``'s result; cancelling the waiter leaves ``future`` alone (others share it)."""
    return await asyncio.shield(asyncio.wrap_future(future))


async def _cancel_others() -> None:
    others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)


class McpSession:
    """One MCP server's connection, opened on first use and reopened after :meth:`aclose`."""

    def __init__(self, address: Address, *, label: str | None = None) -> None:
        self.address = address
        self.label = label or (address.label if isinstance(address, StdioAddress) else address.url)
        self._worker: _Worker | None = None
        self._guard = threading.Lock()

    def _started(self) -> _Worker:
        with self._guard:
            if self._worker is None:
                self._worker = _Worker(self.address)
            return self._worker

    async def list_tools(self) -> list[mcp_types.Tool]:
        try:
            return await _wait(self._started().listed)
        except (McpFailure, TimeoutError) as failure:
            raise self._unlisted(failure) from None

    def list_tools_blocking(self) -> list[mcp_types.Tool]:
        """:meth:`list_tools` for synchronous callers (it blocks while connecting)."""
        try:
            return self._started().listed.result(self._timeout)
        except (McpFailure, TimeoutError) as failure:
            raise self._unlisted(failure) from None

    async def call(self, name: str, arguments: Mapping[str, object]) -> mcp_types.CallToolResult:
        """McpFailure when the server cannot be reached or answers with an error."""
        return await asyncio.wrap_future(
            self._started().submit(lambda connection: connection.call(name, dict(arguments)))
        )

    def close(self) -> None:
        """Disconnect (blocking); the next use connects again."""
        with self._guard:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.close(self._timeout)

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)

    @property
    def _timeout(self) -> float:
        return self.address.connect_timeout * 2 + 5

    def _unlisted(self, failure: Exception) -> McpToolsError:
        why = str(failure) or "the server did not answer in time"
        return McpToolsError(f"the tools of MCP server {self.label!r} could not be listed: {why}")


class McpAgentTool(Tool):
    """One tool of an MCP server, called over its server's shared session."""

    def __init__(
        self, session: McpSession, tool: mcp_types.Tool, server_description: str | None = None
    ) -> None:
        self.session = session
        self.name = tool.name
        description = tool.description or tool.title or ""
        if server_description:
            description = f"{description}\n(MCP server: {server_description})"
        self.description = description.strip()
        self.parameters, _ = normalise(tool.input_schema)

    async def call(self, arguments: JSONObject, context: AgentContext) -> str:
        try:
            result = await self.session.call(self.name, arguments)
        except McpFailure as failure:
            raise ToolError(f"the MCP tool {self.name!r} failed: {failure.message}") from None
        text = result_text(result)
        if result.is_error:
            raise ToolError(f"the MCP tool {self.name!r} failed: {text or 'unknown error'}")
        return text

    async def aclose(self) -> None:
        await self.session.aclose()


def result_text(result: mcp_types.CallToolResult) -> str:
    """The text parts of a result joined by newlines; else its structured content as JSON."""
    from mcp_types import TextContent

    texts = [part.text for part in result.content if isinstance(part, TextContent)]
    if texts:
        return "\n".join(texts)
    if result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False)
    return ""


def server_address(
    server: McpServerSettings | str,
    settings: McpSettings | None = None,
    *,
    headers: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Address:
    """Where ``server`` is: a declared server (stdio or HTTP, its token from
    ``authorization_env``) or a URL; the timeouts from ``settings`` (``[mcp]``)."""
    limits = settings or McpSettings()
    timeouts = (limits.connect_timeout, limits.call_timeout)
    if isinstance(server, str):
        return ServerAddress(server, dict(headers or {}), *timeouts)
    if server.command is not None:
        args = tuple(server.args)
        return StdioAddress(server.label, server.command, args, server.env, server.cwd, *timeouts)
    assert server.url is not None  # McpServerSettings requires a url or a command
    sent = {**server.headers, **(headers or {})}
    token = (os.environ if env is None else env).get(server.authorization_env or "")
    if token:
        sent["Authorization"] = f"Bearer {token}"
    return ServerAddress(server.url, sent, *timeouts)


def _tools(
    session: McpSession, listed: list[mcp_types.Tool], server: McpServerSettings | str
) -> list[Tool]:
    declared = server if isinstance(server, McpServerSettings) else None
    allowed = declared.allowed_tools if declared is not None else None
    description = declared.description if declared is not None else None
    return [
        McpAgentTool(session, tool, description)
        for tool in listed
        if allowed is None or tool.name in allowed
    ]


async def mcp_tools(
    server: McpServerSettings | str,
    settings: McpSettings | None = None,
    *,
    headers: Mapping[str, str] | None = None,
) -> list[Tool]:
    """One tool per tool of ``server`` (a declared server's ``allowed_tools`` only), sharing
    one connection; :class:`McpToolsError` when they cannot be listed."""
    session = McpSession(server_address(server, settings, headers=headers), label=_label(server))
    try:
        listed = await session.list_tools()
    except McpToolsError:
        await session.aclose()
        raise
    return _tools(session, listed, server)


def declared_mcp_tools(label: str, settings: McpSettings) -> list[Tool]:
    """The tools of the ``[[mcp.servers]]`` server ``label``, listed synchronously."""
    servers = {server.label: server for server in settings.servers}
    server = servers.get(label)
    if server is None:
        known = ", ".join(sorted(servers)) or "none are declared"
        raise InvalidRequestError(f"no MCP server is declared with label {label!r} ({known})")
    session = McpSession(server_address(server, settings), label=label)
    try:
        listed = session.list_tools_blocking()
    except McpToolsError:
        session.close()
        raise
    return _tools(session, listed, server)


def _label(server: McpServerSettings | str) -> str:
    return server if isinstance(server, str) else server.label
