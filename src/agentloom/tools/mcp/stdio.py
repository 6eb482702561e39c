"""An MCP server started as a subprocess and spoken to over stdio (the ``mcp`` SDK's stdio
client): one process per response, stopped when the response's exit stack closes (stdin
closed, then SIGTERM and SIGKILL to its process group). Its stderr is logged line by line,
never shown to the client."""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from agentloom.frozen import frozen

if TYPE_CHECKING:
    from mcp.client._transport import TransportStreams

log = logging.getLogger(__name__)
_CHUNK = 65536
_MAX_LINE = 4096  # characters of one stderr line logged


@frozen
class StdioAddress:
    label: str
    command: str
    args: tuple[str, ...]
    env: Mapping[str, str]  # the declared environment; PATH is added
    cwd: Path | None
    connect_timeout: float
    call_timeout: float


def process_env(declared: Mapping[str, str]) -> dict[str, str]:
    """The declared variables plus PATH (the SDK adds its own short list of harmless ones:
    HOME, LOGNAME, SHELL, TERM, USER); nothing else of the server's environment."""
    path = os.environ.get("PATH", os.defpath)
    return {"PATH": path, **declared}


@asynccontextmanager
async def stdio_streams(address: StdioAddress) -> AsyncIterator[TransportStreams]:
    """The SDK's stdio transport with the process's stderr piped into the log."""
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = process_env(address.env)
    await _check_command(address, env["PATH"])
    params = StdioServerParameters(
        command=address.command, args=list(address.args), env=env, cwd=address.cwd
    )
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    errlog = os.fdopen(write_fd, "w")
    async with anyio.create_task_group() as group:
        group.start_soon(_log_lines, read_fd, address.label)
        try:
            async with stdio_client(params, errlog=errlog) as streams:
                errlog.close()  # the child holds its copy: the pipe ends when the process does
                yield streams
        finally:
            errlog.close()
            group.cancel_scope.deadline = anyio.current_time() + 1.0  # drain, then stop


async def _check_command(address: StdioAddress, path: str) -> None:
    """Fail with a message that does not show the client the server's command line."""
    if await anyio.to_thread.run_sync(shutil.which, address.command, os.X_OK, path) is None:
        log.warning("MCP server %s: command %r not found", address.label, address.command)
        raise OSError("the server's command was not found")


async def _log_lines(fd: int, label: str) -> None:
    pending = b""
    try:
        while True:
            await anyio.wait_readable(fd)
            with suppress(BlockingIOError):
                chunk = os.read(fd, _CHUNK)
                if not chunk:
                    break
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    _log(label, line)
    finally:
        if pending:
            _log(label, pending)
        os.close(fd)


def _log(label: str, line: bytes) -> None:
    text = line.decode("utf-8", "replace").rstrip()[:_MAX_LINE]
    if text:
        log.info("MCP server %s: %s", label, text)
