"""The benchmark's processes (the fake backend, agentloom servers): a free port, started, ready
when a path answers 200, stopped at the end."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Iterator

from bench.wire import Connection

HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def wait_ready(port: int, path: str, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    async def probe() -> bool:
        try:
            async with Connection(HOST, port) as conn:
                return (await conn.get(path)).status == 200
        except OSError:
            return False

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode}")
        if asyncio.run(probe()):
            return
        time.sleep(0.1)
    raise RuntimeError(f"{proc.args!r} not ready on port {port} after {timeout}s")


@contextlib.contextmanager
def process(
    args: list[str], port: int, ready: str, env: dict[str, str]
) -> Iterator[subprocess.Popen[bytes]]:
    """``args`` running with ``env`` added to ours, once ``ready`` answers on ``port``."""
    proc = subprocess.Popen(args, env={**os.environ, **env})
    try:
        wait_ready(port, ready, proc)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
