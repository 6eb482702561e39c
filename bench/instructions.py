"""Instructions the server runs for a stored response, counted by valgrind's callgrind.

Server CPU time a response drifts by 10-20% over minutes on a shared host, as much as a change
worth making saves; the instructions executed do not (the same code, inputs and machine give the
same count within about 1%). The server runs under ``valgrind --tool=callgrind`` with counting
off; after a warm-up it is switched on (``callgrind_control -i on``) for ``REQUESTS`` sequential
stored responses, then off; the total is written when the server exits. Cache misses and
system calls are not in the count: it complements the CPU rows, it does not replace them.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
from pathlib import Path

from bench.scenarios import respond
from bench.wire import Connection

REQUESTS = 1000
WARMUP = 50


def available() -> bool:
    return shutil.which("valgrind") is not None and shutil.which("callgrind_control") is not None


def prefix(out: Path) -> list[str]:
    """The command the server runs under, its counts written to ``out`` when it exits."""
    return [
        "valgrind",
        "--quiet",
        "--tool=callgrind",
        "--instr-atstart=no",  # start-up is neither counted nor slowed down
        f"--callgrind-out-file={out}",
    ]


def count(host: str, port: int, pid: int, requests: int = REQUESTS) -> None:
    """Warm the server up, then count ``requests`` sequential stored responses."""
    asyncio.run(_respond(host, port, WARMUP))
    _instrument(pid, "on")
    asyncio.run(_respond(host, port, requests))
    _instrument(pid, "off")


def total(out: Path) -> int:
    """The instructions counted in ``out`` (once the server has exited)."""
    found = re.search(r"^totals: (\d+)", out.read_text(errors="replace"), re.M)
    if found is None:
        raise RuntimeError(f"no totals in {out}")
    return int(found.group(1))


async def _respond(host: str, port: int, requests: int) -> None:
    async with Connection(host, port) as conn:
        for _ in range(requests):
            await respond(conn)


def _instrument(pid: int, state: str) -> None:
    subprocess.run(["callgrind_control", "-i", state, str(pid)], check=True, capture_output=True)
