"""Where storage code runs: the same synchronous SQLAlchemy Core functions on either database.

The store is written as plain functions of a :class:`~sqlalchemy.engine.Connection`. A runner
executes them without blocking the event loop:

* SQLite: the stdlib driver on a thread pool, with one dedicated writer thread (SQLite has one
  writer at a time; serialising writes in-process avoids lock waits) and a few reader threads
  (WAL lets them read while the writer writes). A whole transaction is one thread hop.
* PostgreSQL: the asyncpg driver through SQLAlchemy's async engine (``run_sync``), so the same
  functions run on the event loop without threads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Protocol, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.ext.asyncio import AsyncEngine

T = TypeVar("T")


class Runner(Protocol):
    """Runs storage functions: ``read`` on a plain connection, ``write`` in a transaction."""

    dialect: str

    async def read(self, fn: Callable[[Connection], T]) -> T: ...

    async def write(self, fn: Callable[[Connection], T]) -> T: ...

    async def write_statement(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn``, which executes exactly one (atomic) statement, with no transaction
        around it: one round trip on PostgreSQL instead of three."""

    async def aclose(self) -> None: ...


class ThreadRunner:
    """Synchronous engine (SQLite), driven from worker threads."""

    def __init__(self, engine: Engine, *, readers: int = 4) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="agentloom-db-write")
        self._readers = ThreadPoolExecutor(readers, thread_name_prefix="agentloom-db-read")

    async def read(self, fn: Callable[[Connection], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._readers, partial(self._read, fn))

    async def write(self, fn: Callable[[Connection], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._writer, partial(self._write, fn))

    async def write_statement(self, fn: Callable[[Connection], T]) -> T:
        return await self.write(fn)

    def _read(self, fn: Callable[[Connection], T]) -> T:
        with self.engine.connect() as conn:
            return fn(conn)

    def _write(self, fn: Callable[[Connection], T]) -> T:
        with self.engine.begin() as conn:
            return fn(conn)

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self._shutdown)

    def _shutdown(self) -> None:
        self._writer.shutdown(wait=True)
        self._readers.shutdown(wait=True)
        self.engine.dispose()


class AsyncRunner:
    """Async engine (PostgreSQL via asyncpg): the sync functions run through ``run_sync``."""

    def __init__(self, engine: AsyncEngine, autocommit: AsyncEngine) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name
        # Reads and single statements need no transaction: an autocommit pool of its own spares
        # a BEGIN and a COMMIT/ROLLBACK round trip, and switching isolation on every checkout.
        self._reader = autocommit

    async def read(self, fn: Callable[[Connection], T]) -> T:
        async with self._reader.connect() as conn:
            return await conn.run_sync(fn)

    async def write(self, fn: Callable[[Connection], T]) -> T:
        async with self.engine.begin() as conn:
            return await conn.run_sync(fn)

    async def write_statement(self, fn: Callable[[Connection], T]) -> T:
        async with self._reader.connect() as conn:
            return await conn.run_sync(fn)

    async def aclose(self) -> None:
        await self.engine.dispose()
        await self._reader.dispose()


def scalar_count(table: sa.Table) -> Callable[[Connection], int]:
    """A read function counting the rows of ``table`` (for tests and diagnostics)."""

    def count(conn: Connection) -> int:
        return int(conn.scalar(sa.select(sa.func.count()).select_from(table)) or 0)

    return count
