"""Small requests while a maximal one is processed: what one request at the limits costs the
others.

Probes (``GET /v1/health`` and a stored response, one after another on one connection) are
timed alone, then while another connection sends a request at the server's limits (and one far
over them, which must be refused quickly). The rows compare the probes' p99 in both phases.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass

from bench.backend import MODEL
from bench.scenarios import Latency, respond
from bench.wire import Connection, Reply

PROBES = 200  # probes timed alone


@dataclass(frozen=True, slots=True)
class Stall:
    name: str
    alone: Latency  # probe latencies without the big request
    during: Latency  # probe latencies while it was processed
    seconds: float  # the big request's own time (median)
    status: int
    size: int  # bytes


def input_items(count: int) -> bytes:
    """A request with ``count`` short user messages."""
    items = [{"role": "user", "content": f"Message number {i}: hello there."} for i in range(count)]
    return json.dumps({"model": MODEL, "input": items, "store": False}).encode()


def many_tools(count: int, properties: int) -> bytes:
    """A request offering ``count`` function tools of ``properties`` parameters each."""
    schema = {
        "type": "object",
        "properties": {f"p{i}": {"type": "string"} for i in range(properties)},
    }
    tools = [{"type": "function", "name": f"tool_{i}", "parameters": schema} for i in range(count)]
    return json.dumps({"model": MODEL, "input": "Hi", "tools": tools, "store": False}).encode()


def _stored(count: int) -> bytes:
    return json.dumps({**json.loads(input_items(count)), "store": True}).encode()


def cases() -> list[tuple[str, bytes]]:
    return [
        ("10,000 input items (the default `max_input_items`)", input_items(10_000)),
        ("10,000 input items, stored", _stored(10_000)),
        ("128 function tools of 100 parameters (`max_tools`)", many_tools(128, 100)),
        ("200,000 input items (refused: over `max_json_values`)", input_items(200_000)),
    ]


async def _probe(conn: Connection) -> float:
    start = time.perf_counter()
    reply = await conn.get("/v1/health")
    if reply.status != 200:
        raise RuntimeError(f"health answered {reply.status}")
    await respond(conn)
    return time.perf_counter() - start


async def stall(host: str, port: int, name: str, body: bytes, *, rounds: int = 10) -> Stall:
    """Probes alone, then probes while ``body`` is sent ``rounds`` times in a row (only the
    probes that overlap one of those requests count)."""
    async with Connection(host, port) as probes:
        for _ in range(20):
            await _probe(probes)
        alone = [await _probe(probes) for _ in range(PROBES)]
        async with Connection(host, port) as big:
            sent = asyncio.create_task(_repeated(big, body, rounds))
            during = []
            while not sent.done():
                during.append(await _probe(probes))
            status, seconds = await sent
    return Stall(name, Latency(alone), Latency(during), seconds, status, len(body))


async def _repeated(conn: Connection, body: bytes, rounds: int) -> tuple[int, float]:
    """Send ``body`` ``rounds`` times; the last status and the median time."""
    times, status = [], 0
    for _ in range(rounds):
        start = time.perf_counter()
        reply: Reply = await conn.post_raw("/v1/responses", body)
        times.append(time.perf_counter() - start)
        status = reply.status
    return status, sorted(times)[len(times) // 2]
