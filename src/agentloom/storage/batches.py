"""Single statements of the hot path sent together: group commit for PostgreSQL.

Every stored response ends in one statement (its row and items, ``Runner.execute``). Sent
alone, each costs a round trip, a transaction with its commit on the server, and about 70 µs
of asyncpg's CPU in this process. Statements of the same SQL that come while a batch of it is
on its way wait for it and then go together: one ``executemany``, which asyncpg runs as one
transaction in one round trip (all or nothing), about a third of the CPU per statement.

A statement that finds no batch of its SQL on its way is sent at once, as before, so a quiet
server adds no wait; a busy one sends fewer, larger batches. A batch that fails as a whole is
sent again one statement at a time, so that each caller gets its own statement's outcome (one
bad statement fails alone). A batch whose connection was lost in flight fails every statement
in it with that error: the transaction either committed or not, which the callers settle (as
they settle a single statement lost in flight).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Final

from agentloom.errors import DatabaseUnavailableError
from agentloom.frozen import frozen

__all__ = ["MAX_BATCH", "StatementBatches"]

MAX_BATCH: Final = 64  # statements sent together at most
LANES: Final = 1  # batches of one SQL on their way at once (a lone statement counts as one)

Args = tuple[object, ...]
One = Callable[[str, Args], Awaitable[None]]
Many = Callable[[str, Sequence[Args]], Awaitable[None]]


@frozen
class _Waiting:
    args: Args
    future: asyncio.Future[None]


class StatementBatches:
    """Runs ``execute(sql, args)`` through ``one`` (a statement alone) or ``many`` (statements
    of one SQL in one transaction)."""

    def __init__(self, one: One, many: Many, *, lanes: int = LANES) -> None:
        self._one = one
        self._many = many
        self._lanes = lanes
        self._sending: dict[str, int] = {}  # batches (and lone statements) on their way, by SQL
        self._waiting: dict[str, list[_Waiting]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def execute(self, sql: str, args: Args) -> None:
        if self._sending.get(sql, 0) < self._lanes:
            self._sending[sql] = self._sending.get(sql, 0) + 1
            try:
                await self._one(sql, args)
            finally:
                self._sent(sql)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(sql, []).append(_Waiting(args, future))
        await future

    def _sent(self, sql: str) -> None:
        """One batch of ``sql`` arrived: the next one leaves, if statements wait for it (those
        whose caller went away are withdrawn)."""
        self._sending[sql] -= 1
        waiting = self._waiting.get(sql, [])
        while waiting:
            batch = [w for w in waiting[:MAX_BATCH] if not w.future.cancelled()]
            del waiting[:MAX_BATCH]
            if batch:
                self._sending[sql] += 1
                task = asyncio.get_running_loop().create_task(self._send(sql, batch))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
                return

    async def _send(self, sql: str, batch: list[_Waiting]) -> None:
        try:
            if len(batch) == 1:
                await self._alone(sql, batch[0])
            else:
                await self._together(sql, batch)
        except BaseException:
            for waiting in batch:
                waiting.future.cancel()  # the server is stopping: nobody settles them
            raise
        finally:
            self._sent(sql)

    async def _together(self, sql: str, batch: list[_Waiting]) -> None:
        try:
            await self._many(sql, [w.args for w in batch])
        except DatabaseUnavailableError as lost:
            for waiting in batch:
                _settle(waiting.future, lost)
            return
        except Exception:  # rolled back as a whole: each alone tells its caller its outcome
            for waiting in batch:
                await self._alone(sql, waiting)
            return
        for waiting in batch:
            _settle(waiting.future, None)

    async def _alone(self, sql: str, waiting: _Waiting) -> None:
        try:
            await self._one(sql, waiting.args)
        except Exception as exc:
            _settle(waiting.future, exc)
        else:
            _settle(waiting.future, None)


def _settle(future: asyncio.Future[None], error: BaseException | None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)
