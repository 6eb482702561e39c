"""What the request log costs a request (issue 40): the work on the request's path (its entry
opened, filled by the usage ledger and handed over) and its share of the batched write (the
rows added with the usage every second), in CPU time of the process, threads included.

Measured in-process against the database the bench runs on, apart from HTTP: the row is the
log's own cost, not drowned in a stored response's (the instructions row counts the whole).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from agentloom.config import ModelPriceSettings
from agentloom.inference.base import Usage
from agentloom.request_entry import RequestEntry, logging_request
from agentloom.services.organization.prices import Prices
from agentloom.services.organization.rate_limits import RateLimiter
from agentloom.services.organization.usage import UsageLedger
from agentloom.storage.database import Database
from agentloom.tenancy import acting_for

REQUESTS = 20_000  # requests whose path is timed
BATCH = 500  # rows a flush writes (a second of traffic at 500 requests a second)
FLUSHES = 10
MODEL = "bench-model"
USAGE = Usage(input_tokens=40, output_tokens=12)


def measure(database_url: str) -> tuple[float, float]:
    """Microseconds of CPU a request spends on its log entry, and its share of the write."""
    return asyncio.run(_measure(database_url))


async def _measure(database_url: str) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        if database_url.startswith("sqlite"):
            database_url = f"sqlite:///{Path(tmp) / 'log.db'}"
        database = await Database.connect(database_url, instance_id="bench")
        try:
            await database.migrate()
            return await _timed(database)
        finally:
            await database.aclose()


async def _timed(database: Database) -> tuple[float, float]:
    prices = Prices({MODEL: ModelPriceSettings(input=1.0, output=2.0)})
    limiter = RateLimiter(database.rate_limits)
    ledger = UsageLedger(database.usage, limiter, prices=prices, log=database.request_log)
    with acting_for("proj_bench", key_id="key_bench"):
        bare = _path(ledger, logged=False)
        logged = _path(ledger, logged=True)
        await ledger.flush()
        written = 0.0
        for _ in range(FLUSHES):  # a flush of the usage alone, then of the usage and its rows
            _path(ledger, logged=False, requests=BATCH)
            unlogged = await _flush(ledger)
            _path(ledger, logged=True, requests=BATCH)
            written += await _flush(ledger) - unlogged
    return (logged - bare) / REQUESTS * 1e6, written / (FLUSHES * BATCH) * 1e6


async def _flush(ledger: UsageLedger) -> float:
    started = time.process_time()
    await ledger.flush()
    return time.process_time() - started


def _path(ledger: UsageLedger, *, logged: bool, requests: int = REQUESTS) -> float:
    """CPU seconds of ``requests`` requests' recording, with their log entries or without."""
    started = time.process_time()
    for number in range(requests):
        if not logged:
            ledger.record_call(MODEL, USAGE)
            continue
        entry = RequestEntry.opened(f"req_{number}", "chat.completions")
        with logging_request(entry):
            ledger.record_call(MODEL, USAGE)
        entry.ended(200)
        ledger.log(entry)
    return time.process_time() - started


if __name__ == "__main__":
    import sys

    path_us, write_us = measure(sys.argv[1] if len(sys.argv) > 1 else "sqlite://")
    print(f"on the path {path_us:.1f} us, written {write_us:.1f} us a request")
