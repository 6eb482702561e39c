"""Hot-path statements sent together (PostgreSQL's group commit): a lone statement leaves at
once, the ones that come while it is on its way leave together after it, and every caller
gets its own statement's outcome."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Sequence

import pytest

from agentloom.errors import DatabaseUnavailableError, InvalidRequestError
from agentloom.storage import schema
from agentloom.storage.base import ResponseRow
from agentloom.storage.batches import StatementBatches
from agentloom.storage.database import Database
from agentloom.storage.runner import scalar_count

Args = tuple[object, ...]


class Server:
    """What reached the database: each send's statements, in order. A statement whose first
    argument is ``"bad"`` fails (and takes its batch down with it); ``lost`` loses the
    connection of every batch."""

    def __init__(self) -> None:
        self.sends: list[list[object]] = []
        self.alone: list[bool] = []  # each send: a statement alone (not ``executemany``)
        self.lost = False
        self.gate = asyncio.Event()  # a send waits on the wire until it is set
        self.gate.set()

    async def one(self, sql: str, args: Args) -> None:
        await self._send([args], alone=True)

    async def many(self, sql: str, rows: Sequence[Args]) -> None:
        if self.lost:
            raise DatabaseUnavailableError("The database is unavailable.")
        await self._send(rows, alone=False)

    async def _send(self, rows: Sequence[Args], *, alone: bool) -> None:
        await self.gate.wait()
        if any(args[0] == "bad" for args in rows):
            raise ValueError("refused")
        self.sends.append([args[0] for args in rows])
        self.alone.append(alone)


async def _held(server: Server, batches: StatementBatches, firsts: list[object]) -> list[object]:
    """``firsts`` executed while the first of them is on its way (the gate closed): what each
    caller got (``None`` or its error)."""
    server.gate.clear()
    calls = [asyncio.ensure_future(batches.execute("INSERT", (first,))) for first in firsts]
    await asyncio.sleep(0)
    server.gate.set()
    return list(await asyncio.gather(*calls, return_exceptions=True))


async def test_a_lone_statement_leaves_at_once_and_the_rest_together_after_it() -> None:
    server = Server()
    batches = StatementBatches(server.one, server.many)
    await batches.execute("INSERT", (0,))
    assert server.sends == [[0]]

    assert await _held(server, batches, [1, 2, 3, 4, 5]) == [None] * 5
    assert server.sends == [[0], [1], [2, 3, 4, 5]]  # one on its way, four waited for it
    assert server.alone == [True, True, False]


async def test_a_failing_statement_fails_alone() -> None:
    server = Server()
    batches = StatementBatches(server.one, server.many)
    outcomes = await _held(server, batches, [1, 2, "bad", 4])

    assert [o is None for o in outcomes] == [True, True, False, True]
    assert isinstance(outcomes[2], ValueError)
    assert server.sends == [[1], [2], [4]]  # the batch rolled back, then each alone


async def test_a_batch_lost_in_flight_is_every_caller_s_to_settle() -> None:
    server = Server()
    server.lost = True
    batches = StatementBatches(server.one, server.many)
    outcomes = await _held(server, batches, [1, 2, 3])

    assert outcomes[0] is None  # alone, on a connection that held
    assert all(isinstance(o, DatabaseUnavailableError) for o in outcomes[1:])
    assert server.sends == [[1]]


async def test_a_withdrawn_statement_is_not_sent() -> None:
    server = Server()
    batches = StatementBatches(server.one, server.many)
    server.gate.clear()
    first = asyncio.ensure_future(batches.execute("INSERT", (1,)))
    withdrawn = asyncio.ensure_future(batches.execute("INSERT", (2,)))
    kept = asyncio.ensure_future(batches.execute("INSERT", (3,)))
    await asyncio.sleep(0)
    withdrawn.cancel()
    server.gate.set()
    await asyncio.gather(first, kept)

    assert server.sends == [[1], [3]]
    await batches.execute("INSERT", (4,))  # nothing left on its way: it leaves at once
    assert server.sends[-1] == [4]
    assert server.alone[-1]


# --- on PostgreSQL: stored responses written together --------------------------------------


def _row(rid: str, *, nul: bool = False) -> ResponseRow:
    body = json.dumps({"id": rid, "status": "completed", "model": "m"})
    if nul:  # a raw NUL character, as no JSON encoder writes it (PostgreSQL's text refuses it)
        body = body[:-1] + ', "text": "\x00"}'
    return ResponseRow(rid, 1700000000.0, "m", "completed", None, body)


@pytest.fixture
async def postgres(postgres_url: str) -> Database:
    db = await Database.connect(postgres_url, instance_id="inst_batches", pool_size=4)
    await db.migrate()
    return db


async def test_responses_stored_together_keep_their_own_outcomes(postgres: Database) -> None:
    """40 responses saved at once, one of them with a NUL in its text: that one is refused
    (400), the others are stored."""
    tag = f"{os.getpid()}_{id(postgres)}"
    rows = [_row(f"resp_batch{tag}_{n}", nul=n == 13) for n in range(40)]
    before = await postgres.runner.read(scalar_count(schema.responses))
    try:
        saves = [postgres.responses.save(row, [], []) for row in rows]
        outcomes = await asyncio.gather(*saves, return_exceptions=True)
        assert [n for n, o in enumerate(outcomes) if o is not None] == [13]
        assert isinstance(outcomes[13], InvalidRequestError)
        assert await postgres.runner.read(scalar_count(schema.responses)) == before + 39
        for n in (0, 12, 14, 39):
            stored = await postgres.responses.get(rows[n].id)
            assert stored is not None
            assert stored.response.body == rows[n].body
    finally:
        await postgres.aclose()
