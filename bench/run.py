"""``make bench``: agentloom against its inference backend called directly.

Starts the fast fake backend (``bench.backend``) and ``agentloom serve`` as separate processes,
measures each scenario once straight against the backend and once through agentloom, prints a
table and writes it to ``bench/RESULTS.md``. SQLite always; PostgreSQL too when reachable
(``AGENTLOOM_BENCH_POSTGRES_URL``, default the local ``test`` database; a scratch database is
created and dropped).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from agentloom.testing.serving import serve_async
from bench import (
    baseline,
    hostile,
    ingestion,
    instructions,
    postgres,
    request_log,
    retrieval,
    scenarios,
    sdk,
    soak,
)
from bench.backend import MODEL
from bench.corpus import retrieval as retrieval_corpus
from bench.processes import HOST, free_port, process
from bench.wire import Connection

RESULTS = Path(__file__).with_name("RESULTS.md")

ADDED_MS_TARGET = 3.0
CHAIN_RATIO_TARGET = 1.5
THROUGHPUT_TARGET = 0.40  # of a paced backend's throughput kept
SERVER_MS_TARGET = 0.5  # server CPU a stored response against the instant backend (issue 18)
TWO_PROCESS_TARGET = 1.7
ROUNDS = 3  # runs of each load in a throughput comparison, taken in turn (their medians count)


@dataclass(frozen=True, slots=True)
class Options:
    requests: int
    warmup: int
    clients: int
    seconds: float
    chains: int
    turns: int
    conversation_turns: int
    paced_ms: float


@dataclass(frozen=True, slots=True)
class Row:
    scenario: str
    direct: str
    server: str
    measure: str
    target: str
    passed: bool | None

    def cells(self) -> list[str]:
        verdict = "" if self.passed is None else ("PASS" if self.passed else "FAIL")
        return [self.scenario, self.direct, self.server, self.measure, self.target, verdict]


# --- processes -------------------------------------------------------------------------------


@contextlib.contextmanager
def backend(delay_ms: float = 0.0) -> Iterator[int]:
    port = free_port()
    args = [sys.executable, "-m", "bench.backend", "--port", str(port)]
    args += ["--delay-ms", str(delay_ms)]
    with process(args, port, "/v1/models", {}) as proc:
        PIDS[port] = proc.pid
        yield port


def _config(folder: Path, backend_port: int, extra: str = "") -> Path:
    """The server's TOML: containers in ``folder``, web search at the fake backend's SearXNG
    stand-in (``[web_search]`` has no environment variables); ``extra`` added."""
    path = folder / "agentloom.toml"
    path.write_text(
        f"[code_interpreter]\ndirectory = {str(folder / 'containers')!r}\n\n"
        f'[web_search.live]\nprovider = "searxng"\nbase_url = "http://{HOST}:{backend_port}"\n\n'
        + SHIELDS
        + ROUTED_MODEL
        + extra
    )
    return path


# The routed-model rows' [[models]] entry: one deployment on the fake backend (the environment's
# provider is named "default").
ROUTED = "bench-routed"
ROUTED_MODEL = f"""
[[models]]
id = "{ROUTED}"
deployments = [{{ provider = "default", model = "{MODEL}" }}]
"""


# The guardrail rows' shields: rules in-process, and a Llama Guard the fake backend answers.
SHIELDS = f"""[[safety.shields]]
id = "rules"
type = "rules"

[[safety.shields]]
id = "guard"
type = "llama_guard"
model = "{MODEL}"
"""


@contextlib.contextmanager
def server(
    backend_port: int,
    database_url: str,
    *,
    keyed: bool = False,
    extra_env: dict[str, str] | None = None,
    under: Sequence[str] = (),
    extra_toml: str = "",
) -> Iterator[int]:
    """The server on ``database_url``; ``keyed``: with API keys on (admin key ``ADMIN_KEY``);
    ``extra_env`` added to its environment; ``under``: the command it runs under (valgrind);
    ``extra_toml``: added to its configuration file."""
    port = free_port()
    args = [*under, sys.executable, "-m", "agentloom.cli.main", "serve", "--port", str(port)]
    with tempfile.TemporaryDirectory(prefix="agentloom-bench-") as tmp:
        folder = Path(tmp)
        (folder / "files").mkdir()
        args += ["--config", str(_config(folder, backend_port, extra_toml))]
        env = {
            "AGENTLOOM_DATABASE_URL": database_url,
            "AGENTLOOM_INFERENCE_BASE_URL": f"http://{HOST}:{backend_port}/v1",
            "AGENTLOOM_INFERENCE_MODELS": MODEL,
            "AGENTLOOM_FILES_DIRECTORY": str(folder / "files"),
            "AGENTLOOM_WEBHOOK_ALLOW_LOOPBACK": "true",  # the webhook row's receiver
        }
        if keyed:
            env |= {"AGENTLOOM_AUTH": "keys", "AGENTLOOM_ADMIN_KEY": ADMIN_KEY}
        env |= extra_env or {}
        # under valgrind the start-up is some 30 times slower: minutes on a busy host
        within = 600.0 if under else 60.0
        with process(
            [*args, "--log-level", "warning"], port, "/v1/health", env, within=within
        ) as proc:
            PIDS[port] = proc.pid
            yield port


PIDS: dict[int, int] = {}  # the process id of each backend or server, by its port


# --- measuring -------------------------------------------------------------------------------


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f}"


def _pair(lat: scenarios.Latency) -> str:
    return f"{_ms(lat.median)} / {_ms(lat.p95)}"


async def _latency_rows(backend_port: int, server_port: int, opts: Options) -> list[Row]:
    cases: list[tuple[str, scenarios.Step, scenarios.Step, bool]] = [
        ("stored response", scenarios.chat, scenarios.respond, True),
        ("`store: false`", scenarios.chat, _unstored, False),
        ("streamed, read to the end", _chat_stream, _respond_stream, True),
        (
            "function-tool round trip (2 calls)",
            scenarios.chat_tool_round_trip,
            scenarios.responses_tool_round_trip,
            False,
        ),
    ]
    rows = []
    async with Connection(HOST, backend_port) as direct, Connection(HOST, server_port) as ours:
        for name, direct_step, server_step, targeted in cases:
            base, lat = await scenarios.paired_latency(
                (direct, direct_step),
                (ours, server_step),
                requests=opts.requests,
                warmup=opts.warmup,
            )
            added = (lat.median - base.median) * 1000
            passed = added <= ADDED_MS_TARGET if targeted else None
            target = f"<= {ADDED_MS_TARGET:.0f} ms" if targeted else ""
            rows.append(Row(name, _pair(base), _pair(lat), f"+{added:.2f} ms", target, passed))
    rows.append(await _websocket_row(backend_port, server_port, opts))
    rows.append(await _file_search_row(backend_port, server_port, opts))
    rows += [
        await _server_tool_row(backend_port, server_port, opts, name, step)
        for name, step in SERVER_TOOL_ROWS
    ]
    return rows


GATEWAY_MS_TARGET = 0.5  # added at the median by a Chat Completions passed through


async def _gateway_rows(backend_port: int, server_port: int, opts: Options) -> list[Row]:
    """``/v1/chat/completions`` through agentloom (passed to the backend) against the backend
    itself: the same request both ways, streamed and not, and the rate at 16 clients."""
    rows = []
    cases: list[tuple[str, scenarios.Step, scenarios.Step]] = [
        ("chat completion passed through", scenarios.chat, scenarios.chat),
        ("chat completion passed through, streamed", _chat_stream, _chat_stream),
        ("chat completion, routed model (1 deployment)", scenarios.chat, _routed_chat),
        ("chat completion, routed model, streamed", _chat_stream, _routed_chat_stream),
    ]
    async with Connection(HOST, backend_port) as direct, Connection(HOST, server_port) as ours:
        for name, direct_step, step in cases:
            base, lat = await scenarios.paired_latency(
                (direct, direct_step), (ours, step), requests=opts.requests, warmup=opts.warmup
            )
            added = (lat.median - base.median) * 1000
            target = f"<= {GATEWAY_MS_TARGET} ms"
            rows.append(
                Row(
                    name,
                    _pair(base),
                    _pair(lat),
                    f"+{added:.2f} ms",
                    target,
                    added <= GATEWAY_MS_TARGET,
                )
            )
    common = {"clients": opts.clients, "seconds": opts.seconds, "warmup": 1.0}
    base_load = await scenarios.load(HOST, backend_port, scenarios.chat, **common)
    watched = [PIDS[server_port]]
    ours_load = await scenarios.load(HOST, server_port, scenarios.chat, servers=watched, **common)
    rows.append(
        Row(
            f"chat completions/s passed through, {opts.clients} concurrent clients",
            f"{base_load.rate:.0f} (client CPU {base_load.client_cpu:.0%})",
            f"{ours_load.rate:.0f} (client CPU {ours_load.client_cpu:.0%},"
            f" server CPU {ours_load.server_ms:.2f} ms a request)",
            f"{ours_load.rate / base_load.rate:.0%} of direct",
            "",
            None,
        )
    )
    async with Connection(HOST, server_port) as ours:
        embedded = await scenarios.latency(
            ours, scenarios.embed, requests=opts.requests, warmup=opts.warmup
        )
    rows.append(
        Row(
            f"embeddings: one short text, `{scenarios.EMBEDDING_MODEL}` in the server",
            "",
            _pair(embedded),
            "",
            "",
            None,
        )
    )
    return rows


async def _file_search_row(backend_port: int, server_port: int, opts: Options) -> Row:
    """A response whose model searches a vector store (embedded MiniLM embedder), against the
    same two model calls made directly."""
    store_id = await scenarios.vector_store(HOST, server_port, scenarios.KETTLE_MANUAL)

    async def search(conn: Connection) -> None:
        await scenarios.file_search_round_trip(conn, store_id=store_id)

    name = "file_search response (search + 2 model calls, MiniLM query embedding)"
    return await _server_tool_row(backend_port, server_port, opts, name, search)


SERVER_TOOL_ROWS: list[tuple[str, scenarios.Step]] = [
    (
        "code_interpreter response (sandbox run of print(1) + 2 model calls)",
        scenarios.code_interpreter_round_trip,
    ),
    (
        "web_search response (SearXNG-shaped fake provider + 2 model calls)",
        scenarios.web_search_round_trip,
    ),
]


async def _server_tool_row(
    backend_port: int, server_port: int, opts: Options, name: str, step: scenarios.Step
) -> Row:
    """A response in which the server runs one tool between two model calls, against the same
    two model calls made directly (a function-tool round trip)."""
    counts = {"requests": opts.requests, "warmup": opts.warmup}
    async with Connection(HOST, backend_port) as direct, Connection(HOST, server_port) as ours:
        base, lat = await scenarios.paired_latency(
            (direct, scenarios.chat_tool_round_trip), (ours, step), **counts
        )
    added = (lat.median - base.median) * 1000
    return Row(name, _pair(base), _pair(lat), f"+{added:.2f} ms", "", None)


async def _websocket_row(backend_port: int, server_port: int, opts: Options) -> Row:
    """The function-tool round trip as two ``response.create`` frames on one WebSocket."""
    counts = {"requests": opts.requests, "warmup": opts.warmup}
    async with (
        Connection(HOST, backend_port) as direct,
        scenarios.websocket(HOST, server_port) as ws,
    ):
        base, lat = await scenarios.paired_latency(
            (direct, scenarios.chat_tool_round_trip),
            (ws, scenarios.websocket_tool_round_trip),
            **counts,
        )
    added = (lat.median - base.median) * 1000
    name = "WebSocket: function-tool round trip (2 turns on one connection)"
    return Row(name, _pair(base), _pair(lat), f"+{added:.2f} ms", "", None)


GUARDRAIL_ROWS = [("`rules`", ("rules",)), ("`llama_guard` (fake backend)", ("guard",))]
GUARD_HEADER = [
    "streamed ~300-char answer, a word a chunk",
    "no guardrails (median / p95 ms)",
    "with guardrails (median / p95 ms)",
    "cost",
    "target",
    "",
]


SDK_HEADER = [
    "agent SDK call",
    "`openai` client by hand (median / p95 ms)",
    "agentloom SDK (median / p95 ms)",
    "cost",
    "target",
    "",
]


async def _guardrail_rows(server_port: int, opts: Options) -> list[Row]:
    """What guardrails add to a streamed response: first token and total, each against the
    same response without guardrails (batches of 100 characters, 64 held back)."""
    counts = {"requests": opts.requests, "warmup": opts.warmup}
    rows = []
    async with Connection(HOST, server_port) as conn:
        first, total = await scenarios.streamed_latency(conn, (), **counts)
        for name, shields in GUARDRAIL_ROWS:
            guarded = await scenarios.streamed_latency(conn, shields, **counts)
            for what, base, lat in (
                ("first token", first, guarded[0]),
                ("total", total, guarded[1]),
            ):
                added = (lat.median - base.median) * 1000
                row = Row(f"{name}: {what}", _pair(base), _pair(lat), f"+{added:.2f} ms", "", None)
                rows.append(row)
    return rows


HOSTILE_HEADER = [
    "probes (health + stored response) beside",
    "probes alone (p50 / p99 ms)",
    "probes during (p50 / p99 ms)",
    "p99 added",
    "the big request (median, status)",
    "",
]


ADMIN_KEY = "sk-admin-bench-" + secrets.token_urlsafe(24)
AUTH_TARGET_MS = 0.2


async def _project_key(port: int, *, requests_per_minute: int = 0) -> str:
    """A new project's key, made through the admin API; the project limited to
    ``requests_per_minute`` on the bench model if given."""
    bearer = {"Authorization": f"Bearer {ADMIN_KEY}"}
    async with Connection(HOST, port, headers=bearer) as admin:
        project = (await admin.post("/v1/organization/projects", {"name": "bench"})).json()
        path = f"/v1/organization/projects/{project['id']}"
        account = (await admin.post(f"{path}/service_accounts", {"name": "bench"})).json()
        if requests_per_minute:
            limit = {"max_requests_per_1_minute": requests_per_minute}
            await admin.post(f"{path}/rate_limits/rl-{MODEL.replace('/', '__')}", limit)
    api_key = account["api_key"]
    assert isinstance(api_key, dict)
    return str(api_key["value"])


async def _limiter_row(keyed_port: int, opts: Options) -> Row:
    """Throughput of a project under a rate limit (never reached), against one without."""
    common = {"clients": opts.clients, "seconds": opts.seconds, "warmup": 1.0}
    rates = []
    for limit in (0, 100_000_000):
        key = await _project_key(keyed_port, requests_per_minute=limit)
        headers = {"Authorization": f"Bearer {key}"}
        measured = await scenarios.load(
            HOST, keyed_port, scenarios.respond, headers=headers, **common
        )
        rates.append(measured.rate)
    free, limited = rates
    added = (1 / limited - 1 / free) * 1000 * opts.clients
    return Row(
        f"requests/s, {opts.clients} clients, rate-limited project (vs unlimited)",
        f"{free:.0f}",
        f"{limited:.0f}",
        f"{added:+.2f} ms a request",
        "",
        None,
    )


async def _auth_row(open_port: int, keyed_port: int, opts: Options) -> Row:
    """A stored response with a project key, against the same on a server without keys."""
    bearer = {"Authorization": f"Bearer {await _project_key(keyed_port)}"}
    counts = {"requests": opts.requests, "warmup": opts.warmup}
    async with (
        Connection(HOST, open_port) as plain,
        Connection(HOST, keyed_port, headers=bearer) as keyed,
    ):
        base, lat = await scenarios.paired_latency(
            (plain, scenarios.respond), (keyed, scenarios.respond), **counts
        )
    added = (lat.median - base.median) * 1000
    return Row(
        "stored response, API key checked (vs no auth)",
        _pair(base),
        _pair(lat),
        f"{added:+.2f} ms",
        f"<= {AUTH_TARGET_MS} ms",
        added <= AUTH_TARGET_MS,
    )


OBSERVED_TARGET_MS = 0.3  # metrics and traces on: added at the median


def observed_env(backend_port: int) -> dict[str, str]:
    """Traces exported over OTLP/HTTP to the fake backend's collector stand-in."""
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://{HOST}:{backend_port}"}


QUIET_ENV = {"AGENTLOOM_METRICS": "false"}  # and no OTEL_* variable: no traces


async def _observed_rows(quiet_port: int, observed_port: int, opts: Options) -> list[Row]:
    """Metrics and traces on (spans exported to a local collector) against both off: a stored
    response's latency, and server CPU a request under 16 clients."""
    counts = {"requests": opts.requests, "warmup": opts.warmup}
    async with Connection(HOST, quiet_port) as quiet, Connection(HOST, observed_port) as seen:
        base, lat = await scenarios.paired_latency(
            (quiet, scenarios.respond), (seen, scenarios.respond), **counts
        )
        base_stream, lat_stream = await scenarios.paired_latency(
            (quiet, _respond_stream), (seen, _respond_stream), **counts
        )
    common = {"clients": opts.clients, "seconds": opts.seconds, "warmup": 1.0}
    off = await scenarios.load(
        HOST, quiet_port, scenarios.respond, servers=[PIDS[quiet_port]], **common
    )
    on = await scenarios.load(
        HOST, observed_port, scenarios.respond, servers=[PIDS[observed_port]], **common
    )
    rows = []
    for what, b, a in (
        ("stored response", base, lat),
        ("streamed response", base_stream, lat_stream),
    ):
        added = (a.median - b.median) * 1000
        rows.append(
            Row(
                f"{what}, metrics and traces on (OTLP to a local collector) vs off",
                _pair(b),
                _pair(a),
                f"{added:+.2f} ms",
                f"<= {OBSERVED_TARGET_MS} ms",
                added <= OBSERVED_TARGET_MS,
            )
        )
    rows.append(
        Row(
            f"server CPU a stored response, {opts.clients} clients: metrics and traces on vs off",
            f"{off.server_ms:.2f} ms ({off.rate:.0f}/s)",
            f"{on.server_ms:.2f} ms ({on.rate:.0f}/s)",
            f"{on.server_ms - off.server_ms:+.2f} ms",
            "",
            None,
        )
    )
    return rows


async def _background_rows(server_port: int, opts: Options) -> list[Row]:
    """Background responses on one process: the queued answer against a stored foreground
    create, and one streamed to its end against a foreground stream."""
    counts = {"requests": opts.requests, "warmup": opts.warmup}
    async with Connection(HOST, server_port) as conn:
        stored = await scenarios.latency(conn, scenarios.respond, **counts)

        async def queue(c: Connection) -> None:
            await scenarios.queue_background(c)

        queued = await scenarios.latency(conn, queue, **counts)
        streamed = await scenarios.latency(conn, _respond_stream, **counts)
        background = await scenarios.latency(conn, scenarios.background_streamed, **counts)
        delivered = await _webhook_latency(conn, opts)
    return [
        Row(
            "background create (answers `queued`) vs a stored foreground create",
            _pair(stored),
            _pair(queued),
            f"{(queued.median - stored.median) * 1000:+.2f} ms",
            "",
            None,
        ),
        Row(
            "background response streamed to its end vs the same in foreground",
            _pair(streamed),
            _pair(background),
            f"{(background.median - streamed.median) * 1000:+.2f} ms",
            "",
            None,
        ),
        Row(
            "webhook: a background response's end (stream read) to its signed delivery received",
            "",
            _pair(delivered),
            "",
            "",
            None,
        ),
    ]


MANAGED_MS_TARGET = 1.0  # a managed agent's first token, added at the median (issue 21)


async def _managed_rows(server_port: int, opts: Options) -> list[Row]:
    """A streamed managed-agent message (a ``simple`` agent: one model call) against a plain
    streamed ``/v1/responses`` on the same backend: time to the first token, and to the end.
    The agent's turn stores the message and reads the conversation before its model call."""
    counts = {"requests": opts.requests, "warmup": opts.warmup}
    async with Connection(HOST, server_port) as conn:
        plain, managed = await scenarios.managed_against_plain(conn, **counts)
    rows = []
    for what, base, lat, target in (
        ("first token", _firsts(plain), _firsts(managed), MANAGED_MS_TARGET),
        ("to the end", _totals(plain), _totals(managed), None),
    ):
        added = (lat.median - base.median) * 1000
        rows.append(
            Row(
                f"managed agent message streamed vs `/v1/responses` streamed: {what}",
                _pair(base),
                _pair(lat),
                f"{added:+.2f} ms",
                "" if target is None else f"<= +{target:.0f} ms",
                None if target is None else added <= target,
            )
        )
    return rows


def _firsts(runs: list[scenarios.Streamed]) -> scenarios.Latency:
    return scenarios.Latency([run.first for run in runs])


def _totals(runs: list[scenarios.Streamed]) -> scenarios.Latency:
    return scenarios.Latency([run.total for run in runs])


async def _webhook_latency(conn: Connection, opts: Options) -> scenarios.Latency:
    """Seconds from reading a background response's terminal event to receiving its webhook
    (a receiver in this process, on loopback)."""
    arrivals: asyncio.Queue[float] = asyncio.Queue()

    async def receive(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        arrivals.put_nowait(time.perf_counter())
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async with serve_async(receive, lifespan=False) as base_url:
        hook = {"name": "bench", "url": base_url, "event_types": ["response.completed"]}
        reply = await conn.post("/v1/webhook_endpoints", hook)
        if reply.status != 200:
            raise RuntimeError(f"no webhook endpoint: {reply.body!r}")
        made = reply.json()
        samples = []
        for n in range(opts.warmup + min(opts.requests, 100)):
            await scenarios.background_streamed(conn)
            ended = time.perf_counter()
            arrived = await asyncio.wait_for(arrivals.get(), 10)
            if n >= opts.warmup:
                samples.append(arrived - ended)
        await conn.delete(f"/v1/webhook_endpoints/{made['id']}")
    return scenarios.Latency(samples)


async def _two_process_rows(first: int, second: int, opts: Options) -> list[Row]:
    """Foreground throughput on one process and on two sharing the database, and background
    responses completed per second through two (each created, then followed to its end)."""
    common = {"clients": opts.clients, "seconds": opts.seconds, "warmup": 1.0}
    both = [PIDS[first], PIDS[second]]
    one, two = await scenarios.alternating(
        [
            partial(
                scenarios.load, HOST, first, scenarios.respond, servers=[PIDS[first]], **common
            ),
            partial(
                scenarios.load, HOST, [first, second], scenarios.respond, servers=both, **common
            ),
        ],
        ROUNDS,
    )

    async def job(conn: Connection) -> None:
        await scenarios.follow(conn, await scenarios.queue_background(conn))

    jobs = (await scenarios.load(HOST, [first, second], job, **common)).rate
    ratio, allowed = two.rate / one.rate, _allowed(one)
    return [
        Row(
            f"requests/s, {opts.clients} clients, stored: 1 process vs 2 on one database",
            f"{one.rate:.0f} ({_cores(one)})",
            f"{two.rate:.0f} ({_cores(two)})",
            f"{ratio:.2f}x (the machine allows {allowed:.2f}x)",
            f">= {TWO_PROCESS_TARGET}x, or {ALLOWED_SHARE:.0%} of what the machine allows",
            ratio >= min(TWO_PROCESS_TARGET, ALLOWED_SHARE * allowed),
        ),
        Row(
            f"background responses completed/s through 2 processes, {opts.clients} clients",
            "",
            f"{jobs:.0f}",
            "",
            "",
            None,
        ),
    ]


def _cores(load: scenarios.Load) -> str:
    """Where a load's CPU went: the servers' (and a request's share), the client's, and the
    machine's busy share (the rest of it is the backend, the database and the kernel)."""
    return (
        f"servers {load.server_cpu:.2f} cores, {load.server_ms:.2f} ms a request;"
        f" client {load.client_cpu:.2f}; machine {load.machine_busy:.0%} busy"
    )


ALLOWED_SHARE = 0.9  # of the machine's ceiling, where it is below the target


def _allowed(one: scenarios.Load) -> float:
    """The most two processes could serve against one on this machine: each request costs the
    whole machine (server, backend, database, client, kernel) what it cost with one process,
    and two can at most keep every core busy (or double the rate)."""
    return min(2.0, 1 / one.machine_busy) if one.machine_busy > 0 else 2.0


async def _follower_row(first: int, second: int, opts: Options) -> Row:
    """A background response created on one process and followed to its end from another
    (woken by PostgreSQL notifications), against followed from the one that runs it."""
    samples: dict[int, list[float]] = {first: [], second: []}
    async with Connection(HOST, first) as creator:
        for port in (first, second):
            async with Connection(HOST, port) as reader:
                for n in range(opts.warmup + opts.requests):
                    start = time.perf_counter()
                    response_id = await scenarios.queue_background(creator)
                    await scenarios.follow(reader, response_id)
                    if n >= opts.warmup:
                        samples[port].append(time.perf_counter() - start)
    here, there = scenarios.Latency(samples[first]), scenarios.Latency(samples[second])
    return Row(
        "background: queued, then followed to its end from another process (vs the same)",
        _pair(here),
        _pair(there),
        f"{(there.median - here.median) * 1000:+.2f} ms",
        "",
        None,
    )


async def _hostile_rows(server_port: int) -> list[Row]:
    """Small requests while requests at (and far over) the ``[limits]`` are processed."""
    rows = []
    for name, body in hostile.cases():
        found = await hostile.stall(HOST, server_port, name, body)
        added = (found.during.quantile(0.99) - found.alone.quantile(0.99)) * 1000
        alone = f"{_ms(found.alone.median)} / {_ms(found.alone.quantile(0.99))}"
        during = f"{_ms(found.during.median)} / {_ms(found.during.quantile(0.99))}"
        big = f"{_ms(found.seconds)} ms, {found.status} ({found.size / 1e6:.1f} MB)"
        rows.append(Row(name, alone, during, f"+{added:.1f} ms", big, None))
    return rows


async def _unstored(conn: Connection) -> None:
    await scenarios.respond(conn, store=False)


async def _chat_stream(conn: Connection) -> None:
    await scenarios.chat(conn, stream=True)


async def _routed_chat(conn: Connection) -> None:
    await scenarios.chat(conn, model=ROUTED)


async def _routed_chat_stream(conn: Connection) -> None:
    await scenarios.chat(conn, stream=True, model=ROUTED)


async def _respond_stream(conn: Connection) -> None:
    await scenarios.respond(conn, stream=True)


async def _turns_row(
    server_port: int, opts: Options, name: str, play: scenarios.Turns, turns: int
) -> Row:
    """The median cost of the first five turns against the last five."""
    early: list[float] = []
    late: list[float] = []
    async with Connection(HOST, server_port) as conn:
        await play(conn, turns=5)  # warm up
        for _ in range(opts.chains):
            seconds = await play(conn, turns=turns)
            early += seconds[:5]
            late += seconds[-5:]
    first, last = statistics.median(early), statistics.median(late)
    ratio = last / first
    return Row(
        f"{name}, turns 1-5 vs {turns - 4}-{turns}",
        "",
        f"{_ms(first)} -> {_ms(last)}",
        f"{ratio:.2f}x",
        f"<= {CHAIN_RATIO_TARGET}x",
        ratio <= CHAIN_RATIO_TARGET,
    )


async def _throughput_row(
    backend_port: int,
    server_port: int,
    opts: Options,
    backend_kind: str = "instant backend",
    *,
    paced: bool = False,
) -> Row:
    common = {"clients": opts.clients, "seconds": opts.seconds, "warmup": 1.0}
    watched = [PIDS[server_port]]
    base, ours = await scenarios.alternating(
        [
            partial(scenarios.load, HOST, backend_port, scenarios.chat, **common),
            partial(
                scenarios.load, HOST, server_port, scenarios.respond, servers=watched, **common
            ),
        ],
        ROUNDS,
    )
    share = ours.rate / base.rate
    direct = f"{base.rate:.0f} (client CPU {base.client_cpu:.0%})"
    measured = (
        f"{ours.rate:.0f} (client CPU {ours.client_cpu:.0%},"
        f" server CPU {ours.server_ms:.2f} ms a request)"
    )
    title = f"requests/s, {opts.clients} concurrent clients, stored ({backend_kind})"
    if paced:  # a backend that takes time: how much of its throughput is kept
        target, passed = f">= {THROUGHPUT_TARGET:.0%}", share >= THROUGHPUT_TARGET
    else:  # the instant backend serves tens of thousands a second: the server's own CPU counts
        target = f"server CPU <= {SERVER_MS_TARGET} ms"
        passed = ours.server_ms <= SERVER_MS_TARGET
    return Row(title, direct, measured, f"{share:.0%} of direct", target, passed)


INSTRUCTIONS_ROW = "instructions a stored response"
REQUEST_LOG_US_TARGET = 25.0  # a request's log row, path and write: 5% of SERVER_MS_TARGET


def _request_log_row(database_url: str) -> Row:
    """The request log's cost a request (``bench.request_log``): its entry on the path, and its
    share of the batched write."""
    path_us, write_us = request_log.measure(database_url)
    total = path_us + write_us
    return Row(
        "request log: a request's row (CPU: entry on the path + share of the batched insert)",
        "",
        f"{path_us:.1f} us + {write_us:.1f} us",
        f"+{total / 1000:.3f} ms",
        f"< {REQUEST_LOG_US_TARGET:.0f} us",
        total < REQUEST_LOG_US_TARGET,
    )


def _instructions_row(database_url: str) -> Row:
    """Instructions a stored response costs the server (``bench.instructions``): the measure
    of server work that the host's drift does not move, checked against its baseline
    (``bench.baseline``)."""
    title = (
        f"{INSTRUCTIONS_ROW}, {instructions.REQUESTS} in sequence"
        " (callgrind, the server's duties taken off; the host's speed does not move it)"
    )
    counted = measure_instructions(database_url)
    if counted is None:
        return Row(title, "", "valgrind not installed: not measured", "", "", None)
    base = baseline.baseline_of(database_url)
    return Row(
        title,
        "",
        f"{counted / 1e6:.2f} million",
        f"{counted / base.instructions - 1:+.1%} of the baseline",
        f"<= {base.limit / 1e6:.2f} million (bench/baseline.py + {baseline.TOLERANCE:.0%})",
        base.verdict(counted) is None,
    )


def measure_instructions(database_url: str) -> float | None:
    """Instructions a stored response on ``database_url`` (``None`` without valgrind)."""
    if not instructions.available():
        return None
    with tempfile.TemporaryDirectory() as tmp, backend() as backend_port:
        out = Path(tmp) / "callgrind.out"
        under = instructions.prefix(out)
        quiet, seeded = instructions.QUIET, instructions.HASH_SEED
        with server(
            backend_port, database_url, under=under, extra_toml=quiet, extra_env=seeded
        ) as port:
            window = instructions.count(HOST, port, PIDS[port])
        return instructions.result(out, instructions.REQUESTS, window).per_request


@contextlib.contextmanager
def scratch_sqlite() -> Iterator[str]:
    """A fresh SQLite database's URL, removed afterwards."""
    with tempfile.TemporaryDirectory() as tmp:
        yield f"sqlite:///{Path(tmp) / 'bench.db'}"


def _over_baseline(sections: list[Section]) -> list[str]:
    """The instruction rows that failed their baseline, as their scenario names them."""
    return [
        f"{title}: {row.scenario}"
        for title, rows, _ in sections
        for row in rows
        if isinstance(row, Row)
        and row.scenario.startswith(INSTRUCTIONS_ROW)
        and row.passed is False
    ]


CROWD = 64  # clients of the no-collapse row
CROWD_P99_MS = 50.0


async def _crowd_row(server_port: int, opts: Options) -> Row:
    """64 clients against 16: no collapse (at least 90% of the rate), p99 under 50 ms."""
    common = {"seconds": opts.seconds, "warmup": 1.0, "servers": [PIDS[server_port]]}
    few, many = await scenarios.alternating(
        [
            partial(
                scenarios.load, HOST, server_port, scenarios.respond, clients=opts.clients, **common
            ),
            partial(scenarios.load, HOST, server_port, scenarios.respond, clients=CROWD, **common),
        ],
        ROUNDS,
    )
    held = many.rate / few.rate
    return Row(
        f"requests/s and p99, stored: {opts.clients} vs {CROWD} concurrent clients",
        f"{few.rate:.0f}, p99 {few.p99_ms:.1f} ms (server CPU {few.server_ms:.2f} ms a request)",
        f"{many.rate:.0f}, p99 {many.p99_ms:.1f} ms (client CPU {many.client_cpu:.0%},"
        f" server CPU {many.server_ms:.2f} ms a request)",
        f"{held:.1%} of the rate",
        f">= 90%, p99 < {CROWD_P99_MS:.0f} ms",
        held >= 0.9 and many.p99_ms < CROWD_P99_MS,
    )


async def measure(backend_port: int, server_port: int, opts: Options) -> list[Row]:
    rows = await _latency_rows(backend_port, server_port, opts)
    chain, conversation = scenarios.chain_turns, scenarios.conversation_turns
    rows.append(
        await _turns_row(server_port, opts, "`previous_response_id` chain", chain, opts.turns)
    )
    rows.append(
        await _turns_row(server_port, opts, "conversation", conversation, opts.conversation_turns)
    )
    rows.append(await _throughput_row(backend_port, server_port, opts))
    rows.append(await _crowd_row(server_port, opts))
    rows += await _gateway_rows(backend_port, server_port, opts)
    rows.append(await _ingestion_row(server_port))
    return rows


async def _ingestion_row(server_port: int) -> Row:
    """End-to-end ingestion through the server with the embedded defaults (MiniLM): the
    retrieval corpus's documents as one file batch, static 100-token chunks."""
    done = await scenarios.ingest(
        HOST, server_port, retrieval_corpus.DOCUMENTS, max_tokens=100, overlap=25
    )
    rate = done.chunks / done.seconds
    return Row(
        f"ingestion: {done.files} files, {done.chunks} chunks (MiniLM, batch create to completed)",
        "",
        f"{done.seconds * 1000:.0f} ms",
        f"{rate:.1f} chunks/s",
        "",
        None,
    )


def _bulk_ingestion_row() -> Row:
    """Ingestion of 5,000 chunks (50 files of 100 static 100-token chunks) by a fresh server of
    its own on SQLite (``bench.ingestion``): chunks/s and the server's peak RSS."""
    done = ingestion.measure(5000, 50)
    return Row(
        f"ingestion: {done.files} files, {done.chunks} chunks (MiniLM on {done.runtime},"
        " a fresh server; peak RSS of its process)",
        "",
        f"{done.seconds:.1f} s",
        f"{done.rate:.1f} chunks/s ({done.cpu_rate:.1f} per CPU s),"
        f" peak RSS {ingestion.mib(done.peak_rss)}",
        "",
        None,
    )


# --- reporting -------------------------------------------------------------------------------

HEADER = [
    "scenario",
    "backend direct (median / p95 ms)",
    "agentloom (median / p95 ms)",
    "cost",
    "target",
    "",
]


class Tabular(Protocol):
    def cells(self) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class SoakRow:
    """A soak's result as a table row (``bench.soak``)."""

    result: soak.Result

    def cells(self) -> list[str]:
        return soak.row(self.result)


def table(rows: Sequence[Tabular], header: list[str] = HEADER) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)


Section = tuple[str, Sequence[Tabular], list[str]]  # title, rows, header


def report(sections: list[Section], opts: Options) -> str:
    machine = f"{os.cpu_count()} CPUs, Python {platform.python_version()}, {platform.system()}"
    parts = [
        "# Benchmark results",
        "",
        f"Written by `make bench` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
        f" ({machine}). The fake backend (`bench/backend.py`), agentloom and the load generator"
        f" (`bench/wire.py`) run as three processes on the same machine. Latencies over"
        f" {opts.requests} sequential requests after {opts.warmup} warm-up ones (a row that"
        " compares two ways takes one request of each in turn); chain and"
        f" conversation costs are medians over {opts.chains} chains of {opts.turns} turns and"
        f" {opts.chains} conversations of {opts.conversation_turns} turns; throughput over"
        f" {opts.seconds:.0f} s (the stored-response throughput rows: medians of {ROUNDS} runs"
        " of each load compared, taken in turn).",
        "",
        "The instruction rows (`bench/instructions.py`: callgrind, the server's own duties put"
        " off and taken off) are checked against `bench/baseline.py`: more than"
        f" {baseline.TOLERANCE:.0%} above it is a FAIL and `make bench` exits non-zero. A change"
        " that legitimately costs more measures the row alone (`python -m bench.baseline`) and"
        " moves the baseline there, with the date and why, in the same commit.",
    ]
    for title, rows, header in sections:
        parts += ["", f"## {title}", "", table(rows, header)]
    return "\n".join(parts) + "\n"


async def _sdk_rows(backend_port: int, server_port: int, opts: Options) -> list[Row]:
    """The agent SDK (``bench.sdk``): the LLM adapter and the orchestrator against the same
    HTTP work done by hand with the ``openai`` client."""
    pairs = await sdk.measure(
        f"http://{HOST}:{backend_port}/v1",
        f"http://{HOST}:{server_port}/v1",
        requests=opts.requests,
        warmup=opts.warmup,
    )
    return [
        Row(
            pair.name,
            _pair(pair.direct),
            _pair(pair.sdk),
            f"{(pair.sdk.median - pair.direct.median) * 1000:+.2f} ms",
            "",
            None,
        )
        for pair in pairs
    ]


def run_one(
    title: str, database_url: str, opts: Options, *, with_sdk: bool = False
) -> list[Section]:
    with backend() as backend_port, server(backend_port, database_url) as server_port:
        rows = asyncio.run(measure(backend_port, server_port, opts))
        if not database_url.startswith("postgresql"):  # the embedder's cost: measured once
            rows.append(_bulk_ingestion_row())
        guard_rows = asyncio.run(_guardrail_rows(server_port, opts))
        hostile_rows = asyncio.run(_hostile_rows(server_port))
        sdk_rows = asyncio.run(_sdk_rows(backend_port, server_port, opts)) if with_sdk else []
        rows += asyncio.run(_background_rows(server_port, opts))
        rows += asyncio.run(_managed_rows(server_port, opts))
        if database_url.startswith("postgresql"):
            with server(backend_port, database_url) as second_port:
                rows.append(asyncio.run(_follower_row(server_port, second_port, opts)))
                rows += asyncio.run(_two_process_rows(server_port, second_port, opts))
        with server(backend_port, database_url, keyed=True) as keyed_port:
            rows.append(asyncio.run(_auth_row(server_port, keyed_port, opts)))
            rows.append(asyncio.run(_limiter_row(keyed_port, opts)))
        with (
            server(backend_port, database_url, extra_env=QUIET_ENV) as quiet_port,
            server(backend_port, database_url, extra_env=observed_env(backend_port)) as seen_port,
        ):
            rows += asyncio.run(_observed_rows(quiet_port, seen_port, opts))
    kind = f"backend paced at {opts.paced_ms:.0f} ms an answer"
    with backend(opts.paced_ms) as backend_port, server(backend_port, database_url) as port:
        rows.append(asyncio.run(_throughput_row(backend_port, port, opts, kind, paced=True)))
    rows.append(_request_log_row(database_url))
    rows.append(_instructions_row(database_url))
    guards = f"{title}: guardrails"
    print(f"\n## {title}\n\n{table(rows)}", flush=True)
    print(f"\n## {guards}\n\n{table(guard_rows, GUARD_HEADER)}", flush=True)
    hostile_title = f"{title}: small requests beside requests at the limits"
    print(f"\n## {hostile_title}\n\n{table(hostile_rows, HOSTILE_HEADER)}", flush=True)
    sections: list[Section] = [
        (title, rows, HEADER),
        (guards, guard_rows, GUARD_HEADER),
        (hostile_title, hostile_rows, HOSTILE_HEADER),
    ]
    if sdk_rows:
        print(f"\n## Agent SDK\n\n{table(sdk_rows, SDK_HEADER)}", flush=True)
        sections.append(("Agent SDK", sdk_rows, SDK_HEADER))
    return sections


SOAK = {"requests": 3000, "clients": 32, "warmup": 500}


def _soak_section(tmp_postgres: str | None) -> Section:
    """Thousands of mixed exchanges from 32 connections against one fresh process a database:
    throughput, errors, and what the process holds before and after (``bench.soak``)."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        rows.append(SoakRow(soak.measure(f"sqlite:///{Path(tmp) / 'soak.db'}", **SOAK)))
    if tmp_postgres is not None and postgres.reachable(tmp_postgres):
        with postgres.scratch(tmp_postgres) as pg:
            rows.append(SoakRow(soak.measure(pg, **SOAK)))
    title = "Soak: stored, streamed, function tools, conversation turns, file_search"
    print(f"\n## {title}\n\n{table(rows, soak.HEADER)}", flush=True)
    return (title, rows, soak.HEADER)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--chains", type=int, default=3)
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--conversation-turns", type=int, default=100)
    parser.add_argument(
        "--paced-ms", type=float, default=20.0, help="answer time of the paced backend"
    )
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--no-soak", action="store_true", help="skip the soak (bench.soak)")
    parser.add_argument("--no-write", action="store_true", help="do not write bench/RESULTS.md")
    parser.add_argument(
        "--no-retrieval", action="store_true", help="skip bench.retrieval (its last section stays)"
    )
    args = parser.parse_args()
    opts = Options(
        args.requests,
        args.warmup,
        args.clients,
        args.seconds,
        args.chains,
        args.turns,
        args.conversation_turns,
        args.paced_ms,
    )
    sections: list[Section] = []
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = f"sqlite:///{Path(tmp) / 'bench.db'}"
        sections += run_one("SQLite (embedded default)", sqlite, opts, with_sdk=True)
    pg_admin = os.environ.get("AGENTLOOM_BENCH_POSTGRES_URL", postgres.DEFAULT)
    if not args.no_postgres and postgres.reachable(pg_admin):
        with postgres.scratch(pg_admin) as pg:
            sections += run_one("PostgreSQL", pg, opts)
    elif not args.no_postgres:
        print(f"\nPostgreSQL at {pg_admin} not reachable: skipped", flush=True)
    if not args.no_soak:
        sections.append(_soak_section(tmp_postgres=None if args.no_postgres else pg_admin))
    if not args.no_write:
        kept = retrieval.current() if args.no_retrieval else None
        RESULTS.write_text(report(sections, opts))
        if kept is not None:  # not measured this time: the last measurement stays
            retrieval.write(kept)
    if not args.no_retrieval:
        section = retrieval.markdown(retrieval.measure())
        print(f"\n{section}", flush=True)
        if not args.no_write:
            retrieval.write(section)
    if not args.no_write:
        print(f"\nwritten to {RESULTS}")
    over = _over_baseline(sections)
    if over:
        print("\nFAIL: instructions a stored response above the baseline", file=sys.stderr)
        for row in over:
            print(f"  {row}", file=sys.stderr)
        print("see bench/baseline.py: find the cost, or move the baseline", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
