"""The benchmark's processes (the fake backend, agentloom servers): a free port, started, ready
when a path answers 200, stopped at the end."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

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
    args: list[str], port: int, ready: str, env: dict[str, str], *, within: float = 60.0
) -> Iterator[subprocess.Popen[bytes]]:
    """``args`` running with ``env`` added to ours, once ``ready`` answers on ``port`` (in
    ``within`` seconds)."""
    proc = subprocess.Popen(args, env={**os.environ, **env})
    try:
        wait_ready(port, ready, proc, within)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of the process (``/proc/<pid>/stat`` fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CpuWindow:
    """CPU used between :meth:`start` and :meth:`stop`: by the ``pids`` (in cores: 1.0 is one
    core busy all the time) and by the whole machine (a share of all its cores)."""

    def __init__(self, pids: Sequence[int] = ()) -> None:
        self._pids = list(pids)
        self._start = (0.0, 0.0, (0, 0))

    def start(self) -> None:
        self._start = (time.perf_counter(), self._processes(), _machine_ticks())

    def stop(self) -> tuple[float, float]:
        """(the processes' cores, the machine's busy share) since :meth:`start`."""
        wall = time.perf_counter() - self._start[0]
        busy, total = (a - b for a, b in zip(_machine_ticks(), self._start[2], strict=True))
        return (self._processes() - self._start[1]) / wall, busy / max(total, 1)

    def _processes(self) -> float:
        return sum(cpu_seconds(pid) for pid in self._pids)


def _machine_ticks() -> tuple[int, int]:
    """(busy, total) clock ticks of all CPUs since boot (``/proc/stat``; idle and iowait are
    not busy)."""
    ticks = [int(t) for t in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = ticks[3] + ticks[4]
    return sum(ticks) - idle, sum(ticks)
