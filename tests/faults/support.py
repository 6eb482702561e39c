"""What the fault tests share: a real ``agentloom serve`` process (its settings given as TOML),
raw SSE reading, polling with a bound, and the process's resources read from ``/proc``."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2

from agentloom.testing.backend import FakeBackend
from tests.e2e.test_restart import Server, _env, agentloom_serve

WAIT = 10.0  # seconds any eventual condition gets


@contextmanager
def served(
    backend: FakeBackend,
    database_url: str,
    folder: Path,
    *,
    config: str = "",
    env: dict[str, str] | None = None,
    name: str = "server",
    args: Sequence[str] = (),
) -> Iterator[Server]:
    """``agentloom serve`` on ``database_url`` in front of ``backend``, with ``config`` (TOML),
    ``env`` and command-line ``args`` added; its files under ``folder``; killed on the way
    out."""
    settings = folder / f"{name}.toml"
    settings.write_text(config)
    environment = {
        **_env(database_url, backend),
        "AGENTLOOM_FILES_DIRECTORY": str(folder / "files"),
        **(env or {}),
    }
    log = folder / f"{name}.log"
    with agentloom_serve(environment, log, "--config", str(settings), *args) as server:
        yield server


def sse_events(text: str) -> list[dict[str, Any]]:
    """The JSON ``data:`` of each record of an SSE body (``[DONE]`` left out)."""
    events = []
    for line in text.splitlines():
        if line.startswith("data: ") and line != "data: [DONE]":
            events.append(json.loads(line.removeprefix("data: ")))
    return events


async def eventually(check: Callable[[], Awaitable[bool]], what: str, within: float = WAIT) -> None:
    """Poll ``check`` until it holds, for at most ``within`` seconds."""
    deadline = time.monotonic() + within
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within}s waiting for {what}")
        await anyio.sleep(0.05)


async def status_of(http: httpx2.AsyncClient, response_id: str) -> str | None:
    """The stored response's status; ``None`` while it is not stored (yet)."""
    reply = await http.get(f"/responses/{response_id}")
    if reply.status_code == 404:
        return None
    assert reply.status_code == 200, reply.text
    status: str = reply.json()["status"]
    return status


@dataclass(frozen=True)
class Resources:
    """What a process holds, read from ``/proc``: resident memory, open files, threads."""

    rss_bytes: int
    fds: int
    threads: int

    @classmethod
    def of(cls, pid: int) -> Resources:
        proc = Path(f"/proc/{pid}")
        status = (proc / "status").read_text()
        rss = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
        return cls(
            rss_bytes=int(rss.split()[1]) * 1024,
            fds=len(os.listdir(proc / "fd")),
            threads=len(os.listdir(proc / "task")),
        )
