"""SQLite's runner: the stdlib driver, one writer connection, readers on threads.

SQLite has one writer at a time; serialising writes in-process avoids lock waits. All writes go
through one connection, kept while it is valid so that its page cache stays warm (a pooled
connection finds the file changed by the others and reads its pages again: strace under load
counted 11.6 page reads a stored response on pooled connections, 4.2 on the kept one). Reads
run on a few reader threads (WAL lets them read while the writer writes).

Writes that come in one step of the event loop are committed together (group commit): under
load one transaction carries many responses. If any of them fails, the batch is rolled back and
each is run again alone, so one bad write never takes the others down with it. Where the batch
runs depends on its size:

* A *brief* batch (each write a few rows, as a response's) runs on the event loop's own thread,
  at the end of the step, when the writer connection is free. A hop to a thread costs more than
  such a write: the thread waits for the GIL each time the driver gives it back (up to the
  switch interval, 0.5 ms, while the event loop is busy), and the requests wait for the thread.
  Under 64 clients batches of about 25 responses took 14 ms of wall time on the thread for
  about 2 ms of work; on the loop the server spent 9% less CPU a stored response.
  It never waits there: its connection does not wait for another process's write lock
  (``busy_timeout`` 0), and a batch that fails, for that or any other reason, is rolled back
  and goes to the writer thread, which waits for the lock and runs each write alone if need be.
* Any other write (an ingestion's thousands of chunks, a large response, a deletion that
  cascades) goes to the writer thread, so the event loop never waits for it. While the thread
  holds the connection, brief writes queue behind it there.

A commit on the event loop must not run a checkpoint (copying the WAL into the database and
syncing both, 5-50 ms), so the writer connection's automatic checkpoints are off and the writer
thread runs a passive one, on a connection of its own, after every :data:`CHECKPOINT_EVERY`
committed writes: writes go on meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

from sqlalchemy.engine import Connection, Engine

from agentloom.frozen import frozen
from agentloom.storage.runner import PoolUse, sqlalchemy_use

T = TypeVar("T")
log = logging.getLogger(__name__)

MAX_BATCH = 64  # writes committed together at most
CHECKPOINT_EVERY = 256  # committed writes between two checkpoints (about SQLite's 1,000 pages)


@frozen
class _Job:
    fn: Callable[[Connection], Any]
    future: asyncio.Future[Any]
    loop: asyncio.AbstractEventLoop
    brief: bool


@frozen
class _Outcome:
    job: _Job
    result: Any = None
    error: BaseException | None = None


_CHECKPOINT: list[_Job] = []  # put in the writer thread's queue: checkpoint now


class ThreadRunner:
    """Synchronous engine (SQLite): brief writes on the event loop, others on a writer thread,
    reads on reader threads. ``wal``: the database is a file in WAL mode (checkpointed here)."""

    def __init__(self, engine: Engine, *, readers: int = 4, wal: bool = True) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name
        self._wal = wal
        self._jobs: queue.SimpleQueue[list[_Job] | None] = queue.SimpleQueue()
        # writes of one event-loop step, run or handed to the writer thread together when it
        # ends, by loop
        self._pending: dict[asyncio.AbstractEventLoop, list[_Job]] = {}
        self._connection: Connection | None = None  # the writer connection, used under _lock
        self._lock = threading.Lock()
        self._waiting: bool | None = None  # whether the writer connection waits for locks
        self._busy_ms: int | None = None  # its busy_timeout when it waits
        self._unchecked = 0  # writes committed since the last checkpoint (under _lock)
        self._writer = threading.Thread(
            target=self._write_loop, name="agentloom-db-write", daemon=True
        )
        self._writer.start()
        self._readers = ThreadPoolExecutor(readers, thread_name_prefix="agentloom-db-read")

    async def read(self, fn: Callable[[Connection], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._readers, partial(self._read, fn))

    async def write(self, fn: Callable[[Connection], T], *, brief: bool = False) -> T:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        pending = self._pending.get(loop)
        if pending is None:
            pending = self._pending[loop] = []
            loop.call_soon(self._hand_over, loop)
        pending.append(_Job(fn, future, loop, brief))
        return await future

    def _hand_over(self, loop: asyncio.AbstractEventLoop) -> None:
        """The step's writes: the brief ones here, if the writer connection is free and nothing
        waits for it (so that writes keep their order); the rest to the writer thread."""
        jobs = self._pending.pop(loop)
        brief = [job for job in jobs if job.brief]
        if brief and self._jobs.empty() and self._lock.acquire(blocking=False):
            try:
                outcomes = self._run_here(brief)
                checkpoint = outcomes is not None and self._committed(len(brief))
            finally:
                self._lock.release()
            if outcomes is not None:
                _settle(outcomes)
                jobs = [job for job in jobs if not job.brief]
            if checkpoint:
                self._jobs.put(_CHECKPOINT)
        if jobs:
            self._jobs.put(jobs)

    async def write_statement(self, fn: Callable[[Connection], T]) -> T:
        return await self.write(fn)

    async def execute(self, sql: str, *args: object) -> None:
        await self.write(partial(_execute, sql, args), brief=True)

    async def fetch(self, sql: str, *args: object) -> list[Sequence[Any]]:
        return await self.read(partial(_fetch, sql, args))

    def _read(self, fn: Callable[[Connection], T]) -> T:
        with self.engine.connect() as conn:
            return fn(conn)

    def pools(self) -> list[PoolUse]:
        return [sqlalchemy_use("sqlite", self.engine.pool)]

    # --- the writer connection ---------------------------------------------------------------

    def _writer_connection(self, *, waits: bool) -> Connection:
        """The writer connection; ``waits``: for another process's write lock (its
        ``busy_timeout``), or not at all (on the event loop)."""
        if self._connection is None or self._connection.invalidated:
            self._connection = self.engine.connect()
            self._waiting = None
            if self._wal:  # checkpoints are the writer thread's (see the module's docstring)
                _dbapi(self._connection).execute("PRAGMA wal_autocheckpoint=0")
        if waits != self._waiting:
            driver = _dbapi(self._connection)
            if self._busy_ms is None:
                self._busy_ms = int(driver.execute("PRAGMA busy_timeout").fetchone()[0])
            driver.execute(f"PRAGMA busy_timeout={self._busy_ms if waits else 0}")
            self._waiting = waits
        return self._connection

    def _run_here(self, batch: Sequence[_Job]) -> list[_Outcome] | None:
        """``batch`` in one transaction on this (the event loop's) thread, under ``_lock``;
        ``None`` if it failed: rolled back, for the writer thread to run again (each job alone
        if need be, waiting for the lock if another process holds it), never blocking here."""
        try:
            return _lean_transaction(self._writer_connection(waits=False), batch)
        except Exception:
            return None

    def _run_batch(self, batch: Sequence[_Job]) -> list[_Outcome]:
        """``batch`` in one transaction (each job alone if it fails), under ``_lock``."""
        try:
            return self._transaction(batch, waits=True)
        except Exception as exc:  # handed to the caller, or retried alone
            if len(batch) == 1:
                return [_Outcome(batch[0], error=exc)]
            return [self._run_batch([job])[0] for job in batch]

    def _transaction(self, batch: Sequence[_Job], *, waits: bool) -> list[_Outcome]:
        conn = self._writer_connection(waits=waits)
        with conn.begin():
            results = [job.fn(conn) for job in batch]
        return [_Outcome(job, result) for job, result in zip(batch, results, strict=True)]

    def _committed(self, writes: int) -> bool:
        """Count ``writes`` (under ``_lock``); whether a checkpoint is due."""
        self._unchecked += writes
        if not self._wal or self._unchecked < CHECKPOINT_EVERY:
            return False
        self._unchecked = 0
        return True

    # --- the writer thread -------------------------------------------------------------------

    def _write_loop(self) -> None:
        try:
            while (batch := self._next_batch()) is not None:
                if batch is _CHECKPOINT:
                    self._checkpoint()
                    continue
                with self._lock:
                    outcomes = self._run_batch(batch)
                    checkpoint = self._committed(len(batch))
                for loop in {o.job.loop for o in outcomes}:
                    mine = [o for o in outcomes if o.job.loop is loop]
                    with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits
                        loop.call_soon_threadsafe(_settle, mine)
                if checkpoint:
                    self._checkpoint()
        finally:
            with self._lock:
                if self._connection is not None:
                    self._connection.close()
                    self._connection = None

    def _next_batch(self) -> list[_Job] | None:
        first = self._jobs.get()
        if first is None or first is _CHECKPOINT:
            return first
        batch = list(first)
        while len(batch) < MAX_BATCH:
            try:
                jobs = self._jobs.get_nowait()
            except queue.Empty:
                break
            if jobs is None or jobs is _CHECKPOINT:
                self._jobs.put(jobs)  # after this batch
                break
            batch.extend(jobs)
        return batch

    def _checkpoint(self) -> None:
        """A passive checkpoint on a connection of its own: it copies what it can of the WAL
        into the database while the writer connection goes on writing."""
        try:
            with self.engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")
        except Exception:  # the next one tries again; SQLite's WAL keeps everything till then
            log.warning("SQLite checkpoint failed", exc_info=True)

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self._shutdown)

    def _shutdown(self) -> None:
        self._jobs.put(None)
        self._writer.join()
        self._readers.shutdown(wait=True)
        self.engine.dispose()


def _settle(outcomes: Sequence[_Outcome]) -> None:
    """Hand results to the waiting coroutines (on their loop); cancelled waiters are skipped."""
    for outcome in outcomes:
        future = outcome.job.future
        if future.cancelled():
            continue
        if outcome.error is not None:
            future.set_exception(outcome.error)
        else:
            future.set_result(outcome.result)


def _lean_transaction(conn: Connection, batch: Sequence[_Job]) -> list[_Outcome]:
    """``batch`` in one transaction of the driver's own (SQLite's driver begins one at the
    first write), committed or rolled back by the driver: SQLAlchemy's ``begin()`` and its
    commit cost a tenth of a stored response's write for the same two calls. A job that
    wrote through SQLAlchemy began its transaction there: SQLAlchemy ends it."""
    try:
        results = [job.fn(conn) for job in batch]
        if conn.in_transaction():
            conn.commit()
        else:
            _dbapi(conn).commit()
    except BaseException:
        if conn.in_transaction():
            conn.rollback()
        _dbapi(conn).rollback()
        raise
    return [_Outcome(job, result) for job, result in zip(batch, results, strict=True)]


def _dbapi(conn: Connection) -> Any:
    return conn.connection.dbapi_connection


def _execute(sql: str, args: tuple[object, ...], conn: Connection) -> None:
    _dbapi(conn).execute(sql, args)


def _fetch(sql: str, args: tuple[object, ...], conn: Connection) -> list[Sequence[Any]]:
    cursor = _dbapi(conn).execute(sql, args)
    return list(cursor.fetchall())
