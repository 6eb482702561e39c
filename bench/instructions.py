"""Instructions the server runs for a stored response, counted by valgrind's callgrind.

Server CPU time a response drifts by 10-20% over minutes on a shared host, as much as a change
worth making saves; the instructions executed do not (the same code, inputs and machine give the
same count within about 1%). The server runs under ``valgrind --tool=callgrind`` with counting
off; after a warm-up it is switched on (``callgrind_control -i on``) for ``REQUESTS`` sequential
stored responses, and the count dumped; then the idle server is counted for ``IDLE_SECONDS``.

What the server does beside its requests (the job runner's claims, the key watch, usage
flushes, housekeeping) costs instructions a *second*, not a request: about 9 million a second,
which under valgrind's slowdown (some 20 stored responses a second) was 0.45 million a response,
and more on a loaded host (a slower run holds more seconds): counts moved by 10% from one run to
the next. The counted server puts its duties off (:data:`QUIET`), and the little the idle server
still runs a second, times the requests' wall time, is taken off: the count is the requests'
own. Cache misses and system calls are not in the
count: it complements the CPU rows, it does not replace them.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from bench.scenarios import respond
from bench.wire import Connection

REQUESTS = 1000
WARMUP = 50
IDLE_SECONDS = 10.0

# The counted server's configuration: its duties (the job runner's claims and lease upkeep
# every second, revocation checks, usage flushes, the heartbeat) are put off past the run; what
# little remains is taken off by the idle server's rate. A stored response's in-progress row is
# written 50 ms after its start, which a response under valgrind (some 50 times slower) reaches
# or not depending on the host's load (a second transaction for 5% to 40% of the responses):
# put off too, each response is written once at its end, as at full speed. The embedding
# model is not converted to ONNX at start (numpy runs it): where no process converted it before
# (a new cache directory), the conversion ran in a worker thread through the counted window
# under valgrind, some 30 million instructions a second of numpy in both windows.
QUIET = """
[server]
heartbeat_interval = 3600
usage_flush_interval = 3600

[auth]
watch_interval = 3600

[jobs]
poll_seconds = 3600
lease_seconds = 36000

[engine]
in_progress_after = 3600

[embeddings]
runtime = "numpy"
"""


# One string hash for every run: with a random one (Python's default) dicts and sets probe
# differently from run to run, and the same code counted 1.958-1.990 million on SQLite over six
# runs; with this one three runs counted 1.9605-1.9630.
HASH_SEED = {"PYTHONHASHSEED": "0"}


@dataclass(frozen=True, slots=True)
class Window:
    """The wall time of the counted requests, and of the idle server counted after them."""

    seconds: float
    idle_seconds: float


@dataclass(frozen=True, slots=True)
class Count:
    """A counted run: the requests' window, and the idle server's."""

    requests: int
    counted: int  # instructions while the requests ran (the server's duties included)
    idle: int  # instructions of the idle server after them
    window: Window

    @property
    def duties(self) -> float:
        """The idle server's instructions over the requests' wall time."""
        return self.idle / self.window.idle_seconds * self.window.seconds

    @property
    def per_request(self) -> float:
        """Instructions a request, the server's duties taken off."""
        return (self.counted - self.duties) / self.requests

    @property
    def raw_per_request(self) -> float:
        """Instructions a request, the duties of its wall time included."""
        return self.counted / self.requests


def available() -> bool:
    return shutil.which("valgrind") is not None and shutil.which("callgrind_control") is not None


def prefix(out: Path) -> list[str]:
    """The command the server runs under; its counts are dumped to ``out.1`` (the requests)
    and ``out.2`` (the idle server)."""
    return [
        "valgrind",
        "--quiet",
        "--tool=callgrind",
        "--instr-atstart=no",  # start-up is neither counted nor slowed down
        f"--callgrind-out-file={out}",
    ]


def count(
    host: str, port: int, pid: int, requests: int = REQUESTS, idle: float = IDLE_SECONDS
) -> Window:
    """Warm the server up, count ``requests`` sequential stored responses, then the idle
    server for ``idle`` seconds."""
    asyncio.run(_respond(host, port, WARMUP))
    _control(pid, "-i", "on")
    started = time.monotonic()
    asyncio.run(_respond(host, port, requests))
    _control(pid, "--dump")
    ended = time.monotonic()
    time.sleep(idle)
    _control(pid, "--dump")
    idle_ended = time.monotonic()
    _control(pid, "-i", "off")
    return Window(ended - started, idle_ended - ended)


def result(out: Path, requests: int, window: Window) -> Count:
    """The count of a run of :func:`count` whose server wrote to ``out``."""
    return Count(requests, total(Path(f"{out}.1")), total(Path(f"{out}.2")), window)


def total(out: Path) -> int:
    """The instructions counted in the dump ``out``."""
    found = re.search(r"^(?:totals|summary): (\d+)", out.read_text(errors="replace"), re.M)
    if found is None:
        raise RuntimeError(f"no totals in {out}")
    return int(found.group(1))


async def _respond(host: str, port: int, requests: int) -> None:
    async with Connection(host, port) as conn:
        for _ in range(requests):
            await respond(conn)


def _control(pid: int, *args: str) -> None:
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, capture_output=True)
