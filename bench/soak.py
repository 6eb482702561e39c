"""``python -m bench.soak``: a bounded soak of one server process, and what it holds after.

A fresh ``agentloom serve`` (its own process, on SQLite in a temporary directory or on a
scratch PostgreSQL database) in front of the fast fake backend (``bench.backend``) gets
``--requests`` exchanges from ``--clients`` keep-alive connections at once, a mix of stored
responses, streamed ones read to the end, function-tool round trips (two requests), turns of
a conversation (one per client) and file_search responses over a small vector store. Every
answer is checked (``bench.scenarios``): a wrong one is an error. Before, a warm-up of
``--warmup`` requests of the same mix.

Reported: requests a second, errors, and what the server process holds before the measured run
(after the warm-up) and after it: resident memory (RSS), open file descriptors, threads and,
on PostgreSQL, the database's sessions. A leak shows as growth over a run of thousands of
requests; a flat server holds what the warm-up made it hold. ``measure`` is the function
``make bench`` (and ``tests/faults/test_soak.py``) call.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.engine import make_url

from bench import postgres, scenarios
from bench.backend import MODEL
from bench.processes import HOST, free_port, process
from bench.wire import Connection

SETTLE = 1.0  # seconds after the run before the "after" reading: background work ends
MAX_ERRORS_KEPT = 20


@dataclass(frozen=True, slots=True)
class Held:
    """What the server process holds (``/proc``) and, on PostgreSQL, its sessions."""

    rss: int  # bytes
    fds: int
    threads: int
    sessions: int | None
    tasks: int  # on its event loop (GET /metrics)

    def cells(self) -> list[str]:
        sessions = "" if self.sessions is None else f", {self.sessions} database sessions"
        counts = f"{self.fds} fds, {self.threads} threads, {self.tasks} tasks"
        return [f"{mib(self.rss)}, {counts}{sessions}"]


@dataclass(frozen=True, slots=True)
class Result:
    database: str
    clients: int
    requests: int  # measured (the warm-up's not counted)
    seconds: float
    errors: int
    first_errors: list[str]
    before: Held
    after: Held
    by_kind: dict[str, int] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.requests / self.seconds

    @property
    def rss_growth(self) -> int:
        return self.after.rss - self.before.rss


# --- the mix -------------------------------------------------------------------------------

Step = Callable[["_Client"], Awaitable[int]]  # one exchange; the requests it made


class _Client:
    """One keep-alive connection with a conversation of its own."""

    def __init__(self, conn: Connection, store_id: str) -> None:
        self.conn = conn
        self.store_id = store_id
        self.conversation = ""

    async def turn(self) -> None:
        if not self.conversation:
            reply = await self.conn.post("/v1/conversations", {})
            self.conversation = str(reply.json()["id"])
        payload = {"model": MODEL, "input": "Hello again", "conversation": self.conversation}
        reply = await self.conn.post("/v1/responses", payload)
        if reply.status != 200 or reply.json().get("status") != "completed":
            raise scenarios.ProtocolError(f"conversation turn: {reply.body[:300]!r}")


async def _stored(client: _Client) -> int:
    await scenarios.respond(client.conn)
    return 1


async def _streamed(client: _Client) -> int:
    await scenarios.respond(client.conn, stream=True)
    return 1


async def _tools(client: _Client) -> int:
    await scenarios.responses_tool_round_trip(client.conn)
    return 2


async def _conversation(client: _Client) -> int:
    await client.turn()
    return 1


async def _file_search(client: _Client) -> int:
    await scenarios.file_search_round_trip(client.conn, store_id=client.store_id)
    return 1


MIX: list[tuple[str, Step]] = [
    ("stored", _stored),
    ("streamed", _streamed),
    ("function tools (2 requests)", _tools),
    ("stored", _stored),
    ("streamed", _streamed),
    ("conversation turn", _conversation),
    ("file_search", _file_search),
]


# --- running ---------------------------------------------------------------------------------


@dataclass
class _Tally:
    left: int
    errors: int = 0
    first_errors: list[str] = field(default_factory=list)
    by_kind: dict[str, int] = field(default_factory=dict)

    def take(self) -> bool:
        if self.left <= 0:
            return False
        self.left -= 1
        return True

    def failed(self, kind: str, exc: BaseException) -> None:
        self.errors += 1
        if len(self.first_errors) < MAX_ERRORS_KEPT:
            self.first_errors.append(f"{kind}: {type(exc).__name__}: {str(exc)[:300]}")


async def _drive(port: int, store_id: str, clients: int, exchanges: int) -> _Tally:
    """``clients`` connections sharing ``exchanges`` exchanges of the mix."""
    tally = _Tally(exchanges)

    async def one(number: int) -> None:
        position = number
        conn = Connection(HOST, port)
        await conn.__aenter__()
        client = _Client(conn, store_id)
        try:
            while tally.take():
                kind, step = MIX[position % len(MIX)]
                position += 1
                try:
                    made = await step(client)
                except (scenarios.ProtocolError, OSError, asyncio.IncompleteReadError) as exc:
                    tally.failed(kind, exc)
                    await conn.__aexit__()
                    conn = client.conn = Connection(HOST, port)  # a fresh connection
                    await conn.__aenter__()
                    continue
                tally.by_kind[kind] = tally.by_kind.get(kind, 0) + made
        finally:
            await conn.__aexit__()

    async with asyncio.TaskGroup() as group:
        for number in range(clients):
            group.create_task(one(number))
    return tally


async def held(port: int, pid: int, database_url: str) -> Held:
    proc = Path(f"/proc/{pid}")
    status = proc.joinpath("status").read_text().splitlines()
    rss = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:"))
    fds = len(os.listdir(proc / "fd"))
    threads = len(os.listdir(proc / "task"))
    sessions = await postgres.sessions(database_url)
    return Held(rss, fds, threads, sessions, await _loop_tasks(port))


async def _loop_tasks(port: int) -> int:
    """The server's event-loop tasks, as ``GET /metrics`` counts them (the scrape's own is
    one of them)."""
    async with Connection(HOST, port) as conn:
        reply = await conn.get("/metrics")
    for line in reply.body.decode().splitlines():
        if line.startswith("agentloom_event_loop_tasks "):
            return int(float(line.split()[1]))
    raise RuntimeError("GET /metrics shows no agentloom_event_loop_tasks")


async def soak(
    port: int, pid: int, database_url: str, *, requests: int, clients: int, warmup: int
) -> Result:
    """Warm the server up, read what it holds, run ``requests`` exchanges, read it again."""
    store_id = await scenarios.vector_store(HOST, port, scenarios.KETTLE_MANUAL)
    warm = await _drive(port, store_id, clients, warmup)
    if warm.errors:
        raise RuntimeError(f"the warm-up failed: {warm.first_errors}")
    await asyncio.sleep(SETTLE)
    before = await held(port, pid, database_url)
    start = time.perf_counter()
    tally = await _drive(port, store_id, clients, requests)
    seconds = time.perf_counter() - start
    await asyncio.sleep(SETTLE)
    after = await held(port, pid, database_url)
    made = sum(tally.by_kind.values())
    return Result(
        database=make_url(database_url).get_backend_name(),
        clients=clients,
        requests=made,
        seconds=seconds,
        errors=tally.errors,
        first_errors=tally.first_errors,
        before=before,
        after=after,
        by_kind=dict(sorted(tally.by_kind.items())),
    )


# --- processes -------------------------------------------------------------------------------


@contextlib.contextmanager
def backend() -> Iterator[int]:
    port = free_port()
    args = [sys.executable, "-m", "bench.backend", "--port", str(port)]
    with process(args, port, "/v1/models", {}):
        yield port


@contextlib.contextmanager
def server(backend_port: int, database_url: str, folder: Path) -> Iterator[tuple[int, int]]:
    """A fresh ``agentloom serve`` on ``database_url``: its port and process id."""
    port = free_port()
    (folder / "files").mkdir(exist_ok=True)
    env = {
        "AGENTLOOM_DATABASE_URL": database_url,
        "AGENTLOOM_INFERENCE_BASE_URL": f"http://{HOST}:{backend_port}/v1",
        "AGENTLOOM_INFERENCE_MODELS": MODEL,
        "AGENTLOOM_FILES_DIRECTORY": str(folder / "files"),
    }
    args = [sys.executable, "-m", "agentloom.cli.main", "serve", "--port", str(port)]
    with process([*args, "--log-level", "warning"], port, "/v1/health", env) as proc:
        yield port, proc.pid


def measure(database_url: str, *, requests: int, clients: int, warmup: int) -> Result:
    """The soak of fresh processes (the backend, the server) on ``database_url``; its
    temporary files in a directory of their own."""
    with contextlib.ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="agentloom-soak-")))
        backend_port = stack.enter_context(backend())
        port, pid = stack.enter_context(server(backend_port, database_url, folder))
        return asyncio.run(
            soak(port, pid, database_url, requests=requests, clients=clients, warmup=warmup)
        )


def _run(database: str, args: argparse.Namespace) -> Result:
    with contextlib.ExitStack() as stack:
        if database == "postgresql":
            url = stack.enter_context(postgres.scratch(args.postgres, "agentloom_soak"))
        else:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="agentloom-soak-"))
            url = f"sqlite:///{folder}/agentloom.db"
        return measure(url, requests=args.requests, clients=args.clients, warmup=args.warmup)


# --- reporting -------------------------------------------------------------------------------


def mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"


HEADER = ["soak", "requests/s", "errors", "before (after warm-up)", "after", "RSS growth"]


def row(result: Result) -> list[str]:
    return [
        f"{result.requests} requests, {result.clients} clients, {result.database}",
        f"{result.rate:.0f}",
        str(result.errors),
        *result.before.cells(),
        *result.after.cells(),
        f"{result.rss_growth / (1024 * 1024):+.1f} MiB",
    ]


def describe(result: Result) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines.append("| " + " | ".join(row(result)) + " |")
    mix = ", ".join(f"{kind}: {count}" for kind, count in result.by_kind.items())
    lines.append(f"\nmix: {mix}; {result.seconds:.1f} s")
    lines += [f"error: {error}" for error in result.first_errors]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--requests", type=int, default=3000, help="measured exchanges (a tool round trip: 2)"
    )
    parser.add_argument("--clients", type=int, default=32, help="connections at once")
    parser.add_argument("--warmup", type=int, default=500, help="warm-up requests first")
    parser.add_argument("--database", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--postgres", default=postgres.DEFAULT, help="PostgreSQL server URL")
    args = parser.parse_args(argv)
    databases = ["sqlite", "postgresql"] if args.database == "both" else [args.database]
    for database in databases:
        print(describe(_run(database, args)), flush=True)


if __name__ == "__main__":
    main()
