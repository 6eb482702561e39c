"""Serving an ASGI app over a real socket with uvicorn, for tests and examples.

``serve`` runs it in a background thread, ``serve_async`` on the running event loop; both yield
``http://HOST:PORT/v1`` once the server accepts connections, and leave the process's signal
handlers alone.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import uvicorn
from starlette.types import ASGIApp

from agentloom.server.coalesce import CoalescingHttpToolsProtocol

__all__ = ["serve", "serve_async"]


class _Server(uvicorn.Server):
    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield  # a test server leaves the process's signal handlers alone


def _prepare(app: ASGIApp, host: str, port: int, lifespan: bool) -> tuple[_Server, socket.socket]:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    config = uvicorn.Config(
        app,
        interface="asgi3",
        http=CoalescingHttpToolsProtocol,  # as `agentloom serve` runs
        lifespan="on" if lifespan else "off",
        log_config=None,
        access_log=False,
        proxy_headers=False,
        server_header=False,
        date_header=False,
        timeout_graceful_shutdown=1,
    )
    return _Server(config), sock


def _base_url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/v1"


def _wait_started(server: _Server, thread: threading.Thread, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the server did not start")
        time.sleep(0.002)


@contextmanager
def serve(
    app: ASGIApp, *, host: str = "127.0.0.1", port: int = 0, lifespan: bool = True
) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a background thread; yields ``http://HOST:PORT/v1``.

    ``lifespan=False`` when the caller runs the app's lifespan itself."""
    server, sock = _prepare(app, host, port, lifespan)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="agentloom-test-server", daemon=True
    )
    try:
        thread.start()
        _wait_started(server, thread)
        yield _base_url(sock)
    finally:
        server.should_exit = True
        if thread.is_alive():
            thread.join(timeout=10)
        sock.close()


@asynccontextmanager
async def serve_async(
    app: ASGIApp, *, host: str = "127.0.0.1", port: int = 0, lifespan: bool = True
) -> AsyncIterator[str]:
    """Serve ``app`` with uvicorn on the running event loop; yields ``http://HOST:PORT/v1``.

    ``lifespan=False`` when the caller runs the app's lifespan itself."""
    server, sock = _prepare(app, host, port, lifespan)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if task.done():
                raise RuntimeError("the server did not start")
            await asyncio.sleep(0.002)
        yield _base_url(sock)
    finally:
        server.should_exit = True
        await task
        sock.close()
