"""What the benchmark measures: each scenario once against the backend, once through agentloom.

Every function sends real requests over a keep-alive connection and checks the answer, so a
server that answers fast but wrong fails the benchmark instead of winning it.
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import openai
from websockets.asyncio.client import ClientConnection, connect

from agentloom.retrieval.chunking import chunk_text
from bench.backend import MODEL, STORY
from bench.processes import CpuWindow
from bench.wire import Connection, ProtocolError, Reply

Step = Callable[[Connection], Awaitable[None]]
C = TypeVar("C")


class Turns(Protocol):
    """A multi-turn scenario: the seconds each of ``turns`` turns took."""

    def __call__(self, conn: Connection, *, turns: int) -> Awaitable[list[float]]: ...


HELLO = [{"role": "user", "content": "Hello"}]
WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
CHAT_TOOL = {
    "type": "function",
    "function": {k: v for k, v in WEATHER_TOOL.items() if k != "type"},
}


def _ok(reply: Reply) -> Reply:
    if reply.status != 200:
        raise ProtocolError(f"HTTP {reply.status}: {reply.body[:300]!r}")
    return reply


def _completed(reply: Reply) -> dict[str, object]:
    body = _ok(reply).json()
    if body.get("status") != "completed":
        raise ProtocolError(f"response not completed: {reply.body[:300]!r}")
    return body


def _streamed(reply: Reply, terminal: bytes) -> None:
    if terminal not in _ok(reply).body or not reply.body.endswith(b"data: [DONE]\n\n"):
        raise ProtocolError(f"stream did not finish: {reply.body[-300:]!r}")


# --- one request each ------------------------------------------------------------------------


async def chat(conn: Connection, *, stream: bool = False, model: str = MODEL) -> None:
    payload: dict[str, object] = {"model": model, "messages": HELLO, "stream": stream}
    if stream:
        payload["stream_options"] = {"include_usage": True}
    reply = await conn.post("/v1/chat/completions", payload)
    if stream:
        _streamed(reply, b'"stop"')  # the finish reason (a re-encoded event has no spaces)
    else:
        _ok(reply)


EMBEDDING_MODEL = "all-MiniLM-L6-v2"


async def embed(conn: Connection) -> None:
    """One short text embedded by the embedded MiniLM (``POST /v1/embeddings``)."""
    reply = await conn.post("/v1/embeddings", {"model": EMBEDDING_MODEL, "input": "Hello there"})
    if len(json.loads(_ok(reply).body)["data"][0]["embedding"]) != 384:
        raise ProtocolError(f"not a MiniLM vector: {reply.body[:300]!r}")


async def respond(conn: Connection, *, store: bool = True, stream: bool = False) -> None:
    payload = {"model": MODEL, "input": "Hello", "store": store, "stream": stream}
    reply = await conn.post("/v1/responses", payload)
    if stream:
        _streamed(reply, b"event: response.completed")
    else:
        _completed(reply)


async def queue_background(conn: Connection) -> str:
    """Create a background response; its id (it answers ``queued`` at once)."""
    payload = {"model": MODEL, "input": "Hello", "background": True}
    body = _ok(await conn.post("/v1/responses", payload)).json()
    if body.get("status") != "queued":
        raise ProtocolError(f"background response not queued: {body!r}")
    return str(body["id"])


async def background_streamed(conn: Connection) -> None:
    """Create a background response and stream it to its end on the same connection."""
    payload = {"model": MODEL, "input": "Hello", "background": True, "stream": True}
    _streamed(await conn.post("/v1/responses", payload), b"event: response.completed")


async def follow(conn: Connection, response_id: str) -> None:
    """Stream a background response (from its start) until it ends."""
    reply = await conn.get(f"/v1/responses/{response_id}?stream=true")
    _streamed(reply, b"event: response.completed")


@dataclass(frozen=True, slots=True)
class Streamed:
    first: float  # seconds to the first output_text delta
    total: float  # seconds to the end of the stream


async def story_stream(conn: Connection, *, guardrails: Sequence[str] = ()) -> Streamed:
    """A streamed response telling the backend's story (~300 characters, a word a chunk),
    checked by ``guardrails``; it must not be refused."""
    payload: dict[str, object] = {"model": MODEL, "input": STORY, "stream": True}
    if guardrails:
        payload["guardrails"] = list(guardrails)
    start = time.perf_counter()
    reply, first = await conn.post_timed("/v1/responses", payload, b"response.output_text.delta")
    total = time.perf_counter() - start
    _streamed(reply, b"event: response.completed")
    if b"response.refusal.delta" in reply.body:
        raise ProtocolError(f"the guardrails refused the story: {reply.body[-300:]!r}")
    return Streamed(first, total)


# --- a function-tool round trip: the model calls a tool, the client answers ------------------


async def chat_tool_round_trip(conn: Connection) -> None:
    payload = {"model": MODEL, "messages": HELLO, "tools": [CHAT_TOOL]}
    first = _ok(await conn.post("/v1/chat/completions", payload)).json()
    message = first["choices"][0]["message"]  # type: ignore[index]
    result = {"role": "tool", "tool_call_id": "call_bench", "content": "sunny"}
    payload["messages"] = [*HELLO, message, result]
    _ok(await conn.post("/v1/chat/completions", payload))


async def responses_tool_round_trip(conn: Connection) -> None:
    payload: dict[str, object] = {"model": MODEL, "input": "Hello", "tools": [WEATHER_TOOL]}
    first = _completed(await conn.post("/v1/responses", payload))
    output = first["output"]
    if not isinstance(output, list) or output[-1].get("type") != "function_call":
        raise ProtocolError(f"expected a function_call, got {output!r}")
    answer = {"type": "function_call_output", "call_id": output[-1]["call_id"], "output": "sunny"}
    payload.update(input=[answer], previous_response_id=first["id"])
    _completed(await conn.post("/v1/responses", payload))


# --- file_search: the model searches a vector store, the server runs the search -----------

KETTLE_MANUAL = (
    "The Zephyr X2 kettle boils a litre of water in ninety seconds. Descale it monthly with "
    "citric acid.\n\nIts warranty covers the heating element for five years from purchase; "
    "the lid and filter are covered for one year."
)


async def vector_store(host: str, port: int, document: str) -> str:
    """Set-up, not measured: a vector store holding ``document``, ingested; its id."""
    client = openai.AsyncOpenAI(base_url=f"http://{host}:{port}/v1", api_key="bench")
    async with client:
        uploaded = await client.files.create(
            file=("manual.md", document.encode()), purpose="assistants"
        )
        store = await client.vector_stores.create(name="bench")
        done = await client.vector_stores.files.create_and_poll(
            file_id=uploaded.id, vector_store_id=store.id
        )
        if done.status != "completed":
            raise ProtocolError(f"ingestion did not complete: {done.last_error!r}")
        return store.id


@dataclass(frozen=True, slots=True)
class Ingestion:
    files: int
    chunks: int
    seconds: float  # from the batch's creation until every file is completed


async def ingest(
    host: str, port: int, documents: dict[str, str], *, max_tokens: int, overlap: int
) -> Ingestion:
    """Upload ``documents`` and ingest them as one file batch, timed from the batch's
    creation to its completion (the SDK's polling, at the server's poll hint)."""
    client = openai.AsyncOpenAI(base_url=f"http://{host}:{port}/v1", api_key="bench")
    async with client:
        ids = [
            (await client.files.create(file=(f"{name}.md", body.encode()), purpose="assistants")).id
            for name, body in documents.items()
        ]
        store = await client.vector_stores.create(name="ingestion")
        strategy: Any = {
            "type": "static",
            "static": {"max_chunk_size_tokens": max_tokens, "chunk_overlap_tokens": overlap},
        }
        start = time.perf_counter()
        batch = await client.vector_stores.file_batches.create_and_poll(
            vector_store_id=store.id, file_ids=ids, chunking_strategy=strategy
        )
        seconds = time.perf_counter() - start
    if batch.file_counts.completed != len(ids):
        raise ProtocolError(f"ingestion did not complete: {batch.file_counts!r}")
    chunks = sum(
        len(chunk_text(body, max_tokens=max_tokens, overlap=overlap)) for body in documents.values()
    )
    return Ingestion(files=len(ids), chunks=chunks, seconds=seconds)


async def file_search_round_trip(conn: Connection, *, store_id: str) -> None:
    """One response: the model calls file_search, the server searches, the model answers."""
    tool = {"type": "file_search", "vector_store_ids": [store_id]}
    await _server_tool_round_trip(conn, tool, "How long is the warranty?", "file_search_call")


async def code_interpreter_round_trip(conn: Connection) -> None:
    """One response: the model runs ``print(1)`` in a new container, then answers."""
    tool = {"type": "code_interpreter", "container": {"type": "auto"}}
    await _server_tool_round_trip(
        conn,
        tool,
        "Print 1.",
        "code_interpreter_call",
        include="code_interpreter_call.outputs",
        expect='"logs": "1\\n"',
    )


async def web_search_round_trip(conn: Connection) -> None:
    """One response: the model searches the web (the fake SearXNG), then answers."""
    tool = {"type": "web_search"}
    await _server_tool_round_trip(
        conn,
        tool,
        "What is agentloom?",
        "web_search_call",
        include="web_search_call.action.sources",
        expect="https://agentloom.example.com/",
    )


async def _server_tool_round_trip(
    conn: Connection,
    tool: Mapping[str, object],
    question: str,
    item_type: str,
    *,
    include: str | None = None,
    expect: str = "",
) -> None:
    """A response in which the server runs ``tool`` once and the model answers: its output
    must be one completed ``item_type`` item (whose JSON, with ``include``, holds ``expect``)
    and a message."""
    payload: dict[str, object] = {"model": MODEL, "input": question, "tools": [tool]}
    if include is not None:
        payload["include"] = [include]
    output = _completed(await conn.post("/v1/responses", payload))["output"]
    types = [item.get("type") for item in output] if isinstance(output, list) else None
    if not isinstance(output, list) or types != [item_type, "message"]:
        raise ProtocolError(f"expected a {item_type} and an answer, got {output!r}")
    if output[0].get("status") != "completed":
        raise ProtocolError(f"the {item_type} did not complete: {output[0]!r}")
    if expect not in json.dumps(output[0]):
        raise ProtocolError(f"the {item_type} lacks {expect!r}: {output[0]!r}")


# --- the same round trip over one WebSocket (``ws://HOST/v1/responses``) ----------------------

_FRAME_TYPE = re.compile(r'"type":\s*"([^"]+)"')
_FRAME_ENDS = frozenset({"response.completed", "response.incomplete", "response.failed", "error"})


def websocket(host: str, port: int) -> connect:
    """A WebSocket connection to agentloom, without compression (as the ``openai`` SDK opens)."""
    return connect(f"ws://{host}:{port}/v1/responses", compression=None, max_size=None)


async def _ws_completed(ws: ClientConnection, payload: dict[str, object]) -> dict[str, object]:
    """Send one ``response.create``; read its frames (only the last one parsed) to the end."""
    await ws.send(json.dumps(payload))
    while True:
        frame = await ws.recv(decode=True)
        kind = _FRAME_TYPE.search(frame, 0, 80)  # the top-level type comes first
        if kind is not None and kind.group(1) in _FRAME_ENDS:
            break
    body = json.loads(frame)
    if body["type"] != "response.completed":
        raise ProtocolError(f"response not completed: {frame[:300]!r}")
    response: dict[str, object] = body["response"]
    return response


async def websocket_tool_round_trip(ws: ClientConnection) -> None:
    payload: dict[str, object] = {
        "type": "response.create",
        "model": MODEL,
        "input": "Hello",
        "tools": [WEATHER_TOOL],
    }
    first = await _ws_completed(ws, payload)
    output = first["output"]
    if not isinstance(output, list) or output[-1].get("type") != "function_call":
        raise ProtocolError(f"expected a function_call, got {output!r}")
    answer = {"type": "function_call_output", "call_id": output[-1]["call_id"], "output": "sunny"}
    payload.update(input=[answer], previous_response_id=first["id"])
    await _ws_completed(ws, payload)


# --- measuring -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Latency:
    samples: list[float]  # seconds

    def quantile(self, q: float) -> float:
        ordered = sorted(self.samples)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    @property
    def median(self) -> float:
        return self.quantile(0.5)

    @property
    def p95(self) -> float:
        return self.quantile(0.95)


async def latency(
    conn: C, step: Callable[[C], Awaitable[None]], *, requests: int, warmup: int
) -> Latency:
    for _ in range(warmup):
        await step(conn)
    samples = []
    for _ in range(requests):
        start = time.perf_counter()
        await step(conn)
        samples.append(time.perf_counter() - start)
    return Latency(samples)


D = TypeVar("D")


async def paired_latency(
    first: tuple[C, Callable[[C], Awaitable[None]]],
    second: tuple[D, Callable[[D], Awaitable[None]]],
    *,
    requests: int,
    warmup: int,
) -> tuple[Latency, Latency]:
    """:func:`latency` of two steps taken in turn, one request of each at a time: on a shared
    machine, a slow moment then weighs on both sides instead of on whichever ran in it."""
    (a, step_a), (b, step_b) = first, second
    for _ in range(warmup):
        await step_a(a)
        await step_b(b)
    samples: tuple[list[float], list[float]] = ([], [])
    for _ in range(requests):
        start = time.perf_counter()
        await step_a(a)
        middle = time.perf_counter()
        await step_b(b)
        samples[0].append(middle - start)
        samples[1].append(time.perf_counter() - middle)
    return Latency(samples[0]), Latency(samples[1])


async def streamed_latency(
    conn: Connection, guardrails: Sequence[str], *, requests: int, warmup: int
) -> tuple[Latency, Latency]:
    """Time to the first token and to the end of :func:`story_stream`."""
    for _ in range(warmup):
        await story_stream(conn, guardrails=guardrails)
    runs = [await story_stream(conn, guardrails=guardrails) for _ in range(requests)]
    return Latency([run.first for run in runs]), Latency([run.total for run in runs])


async def managed_story(conn: Connection) -> Streamed:
    """A new managed agent (``simple``, on the backend's model) told to tell the story, its
    reply streamed (``POST /v1/managed-agents/{id}/messages``, ``stream: true``): seconds to the
    first content chunk and to the end. The agent is made first, not timed."""
    body = {"name": "bench", "agent_type": "simple", "config": {"model": MODEL}}
    agent = _ok(await conn.post("/v1/managed-agents", body)).json()
    path = f"/v1/managed-agents/{agent['id']}/messages"
    start = time.perf_counter()
    reply, first = await conn.post_timed(path, {"content": STORY, "stream": True}, b'"content"')
    total = time.perf_counter() - start
    _streamed(reply, b'"finish_reason":"stop"')
    return Streamed(first, total)


async def managed_against_plain(
    conn: Connection, *, requests: int, warmup: int
) -> tuple[list[Streamed], list[Streamed]]:
    """:func:`story_stream` and :func:`managed_story` taken in turns (so both see the same
    load): the plain streams' times, then the managed agent's."""
    for _ in range(warmup):
        await story_stream(conn)
        await managed_story(conn)
    plain, managed = [], []
    for _ in range(requests):
        plain.append(await story_stream(conn))
        managed.append(await managed_story(conn))
    return plain, managed


async def chain_turns(conn: Connection, *, turns: int) -> list[float]:
    """Seconds taken by each turn of one ``previous_response_id`` chain."""
    previous: object = None
    seconds = []
    for turn in range(turns):
        payload = {"model": MODEL, "input": f"Turn {turn}", "previous_response_id": previous}
        start = time.perf_counter()
        body = _completed(await conn.post("/v1/responses", payload))
        seconds.append(time.perf_counter() - start)
        previous = body["id"]
    return seconds


async def conversation_turns(conn: Connection, *, turns: int) -> list[float]:
    """Seconds taken by each turn of one conversation (``conversation`` on every response)."""
    conversation = _ok(await conn.post("/v1/conversations", {})).json()["id"]
    seconds = []
    for turn in range(turns):
        payload = {"model": MODEL, "input": f"Turn {turn}", "conversation": conversation}
        start = time.perf_counter()
        _completed(await conn.post("/v1/responses", payload))
        seconds.append(time.perf_counter() - start)
    return seconds


@dataclass(frozen=True, slots=True)
class Load:
    """What a closed-loop load measured: completed requests a second, their p99 latency, and
    the load client's own CPU over the window (1.0 = one core: the client is the bottleneck)."""

    rate: float
    p99_ms: float
    client_cpu: float
    server_cpu: float = 0.0  # cores used by the servers watched (0 when none is)
    machine_busy: float = 0.0  # share of all the machine's cores busy (everything on it)

    @property
    def server_ms(self) -> float:
        """Server CPU milliseconds per completed request."""
        return self.server_cpu / self.rate * 1000 if self.rate else 0.0


def median_load(loads: Sequence[Load]) -> Load:
    """Each measure's median over ``loads`` (runs of one load, taken in turn with another's:
    the machine's speed drifts by 10-15% over minutes on a shared host)."""
    mid = statistics.median
    return Load(
        rate=mid([x.rate for x in loads]),
        p99_ms=mid([x.p99_ms for x in loads]),
        client_cpu=mid([x.client_cpu for x in loads]),
        server_cpu=mid([x.server_cpu for x in loads]),
        machine_busy=mid([x.machine_busy for x in loads]),
    )


async def alternating(loads: Sequence[Callable[[], Awaitable[Load]]], rounds: int) -> list[Load]:
    """Each of ``loads`` run ``rounds`` times in turn (A B A B ...): their medians."""
    runs: list[list[Load]] = [[] for _ in loads]
    for _ in range(rounds):
        for made, run in zip(runs, loads, strict=True):
            made.append(await run())
    return [median_load(made) for made in runs]


async def load(
    host: str,
    port: int | Sequence[int],
    step: Step,
    *,
    clients: int,
    seconds: float,
    warmup: float,
    headers: dict[str, str] | None = None,
    servers: Sequence[int] = (),
) -> Load:
    """Completed requests per second with ``clients`` connections sending back to back
    (spread over the ``port`` s, when several servers are given), their p99 latency, the
    client's CPU share, and the CPU of the ``servers`` (process ids) and of the machine."""
    ports = [port] if isinstance(port, int) else list(port)
    latencies: list[float] = []
    counting = False

    async def client(port: int) -> None:
        async with Connection(host, port, headers=headers) as conn:
            deadline = time.perf_counter() + warmup + seconds
            while time.perf_counter() < deadline:
                start = time.perf_counter()
                await step(conn)
                if counting:
                    latencies.append(time.perf_counter() - start)

    async def clock() -> Load:
        nonlocal counting
        await asyncio.sleep(warmup)
        counting = True
        start, cpu = time.perf_counter(), time.process_time()
        window.start()
        await asyncio.sleep(seconds)
        counting = False
        server_cpu, machine = window.stop()
        wall = time.perf_counter() - start
        done = sorted(latencies)
        p99 = done[min(len(done) - 1, int(len(done) * 0.99))] * 1000 if done else 0.0
        client_cpu = (time.process_time() - cpu) / wall
        return Load(len(done) / wall, p99, client_cpu, server_cpu, machine)

    window = CpuWindow(servers)

    async with asyncio.TaskGroup() as group:
        for n in range(clients):
            group.create_task(client(ports[n % len(ports)]))
        rate = group.create_task(clock())
    return rate.result()
