"""Where storage code runs: the same synchronous SQLAlchemy Core functions on either database.

The store is written as plain functions of a :class:`~sqlalchemy.engine.Connection`. A runner
executes them without blocking the event loop:

* SQLite: the stdlib driver, one writer connection and reader threads
  (:mod:`agentloom.storage.sqlite_runner`). Writes of one event-loop step are committed
  together (group commit); brief ones on the event loop's thread, others on a writer thread.
* PostgreSQL: the asyncpg driver through SQLAlchemy's async engine (``run_sync``), so the same
  functions run on the event loop without threads. The few statements on every response's path
  go to asyncpg directly (:meth:`Runner.execute`): SQLAlchemy's execution machinery and its
  pool checkout cost as much CPU as the statement's round trip. Those of one SQL that come
  while one is on its way go together after it, in one transaction
  (:mod:`agentloom.storage.batches`: PostgreSQL's group commit), and each such SQL keeps its
  pool connection between statements (its *lane*: no checkout and release each time).

Connections are pooled for the life of the process, with room for the workload's concurrency,
so a busy server never opens and closes connections per request. A PostgreSQL connection lost
under the server (:mod:`agentloom.storage.connection_faults`) costs no caller an error when
nothing can have taken effect: a read, or a transaction that had not reached its ``COMMIT``, is
run again once on a fresh connection. A single statement, or a ``COMMIT``, whose connection was
lost in flight may have taken effect: it is reported as
:class:`~agentloom.errors.DatabaseUnavailableError` (503) for the caller to settle.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import asyncpg  # type: ignore[import-untyped]
import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.pool import Pool, QueuePool

from agentloom.errors import DatabaseUnavailableError, InvalidRequestError
from agentloom.frozen import frozen
from agentloom.storage.batches import StatementBatches
from agentloom.storage.connection_faults import connection_lost, driver_words, never_sent
from agentloom.tracing import Leaf, Tracing

T = TypeVar("T")
log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine


@frozen
class PoolUse:
    """One connection pool's connections right now (what ``GET /metrics`` shows)."""

    pool: str
    in_use: int
    idle: int


class Runner(Protocol):
    """Runs storage functions: ``read`` on a plain connection, ``write`` in a transaction."""

    dialect: str

    def pools(self) -> list[PoolUse]:
        """The connections of its pools."""

    async def read(self, fn: Callable[[Connection], T]) -> T: ...

    async def write(self, fn: Callable[[Connection], T], *, brief: bool = False) -> T:
        """``fn`` in a transaction. ``brief``: it writes a few rows, quickly enough for the
        event loop's own thread (SQLite; PostgreSQL's writes never block the loop)."""

    async def write_statement(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn``, which executes exactly one (atomic) statement, with no transaction
        around it: one round trip on PostgreSQL instead of three."""

    async def execute(self, sql: str, *args: object) -> None:
        """Run one (atomic) statement written in the driver's own SQL and placeholders
        (``$1`` for asyncpg, ``?`` for sqlite3) on the driver itself: the hot path."""

    async def fetch(self, sql: str, *args: object) -> list[Sequence[Any]]:
        """The rows of one query written in the driver's own SQL (as :meth:`execute`'s), read
        on the driver itself: a hot path's read."""

    async def aclose(self) -> None: ...


RETRY_AFTER = 0.05  # seconds before a statement whose connection was lost is tried again


# PostgreSQL's text holds no NUL character (SQLite's does): its refusal is the caller's
# mistake, a 400, not a fault of the server.
_UNSTORABLE_TEXT = frozenset({"22021", "22P05"})  # character_not_in_repertoire, untranslatable


def _sqlstate(exc: BaseException) -> str | None:
    """The SQLSTATE of an asyncpg error, bare or wrapped by SQLAlchemy."""
    for cause in (exc, getattr(exc, "orig", None)):
        driver = getattr(cause, "driver_exception", cause)
        state = getattr(driver, "sqlstate", None)
        if isinstance(state, str):
            return state
    return None


@contextlib.contextmanager
def _storable_text() -> Iterator[None]:
    try:
        yield
    except (sa.exc.DBAPIError, asyncpg.PostgresError) as exc:
        if _sqlstate(exc) not in _UNSTORABLE_TEXT:
            raise
        raise InvalidRequestError(
            "Text with a NUL character (\\u0000) cannot be stored or looked up on this server "
            "(PostgreSQL): remove it from the request.",
            code="invalid_value",
        ) from None


class AsyncRunner:
    """Async engine (PostgreSQL via asyncpg): the sync functions run through ``run_sync``;
    :meth:`execute` on a plain asyncpg pool (``pool`` opens it, on first use). Text that
    PostgreSQL cannot hold (a NUL character) is an :class:`InvalidRequestError`."""

    def __init__(
        self,
        engine: AsyncEngine,
        autocommit: AsyncEngine,
        pool: Callable[[], Awaitable[asyncpg.Pool]],
    ) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name
        # Reads and single statements need no transaction: an autocommit pool of its own spares
        # a BEGIN and a COMMIT/ROLLBACK round trip, and switching isolation on every checkout.
        self._reader = autocommit
        self._open_pool = pool
        self._pool: asyncpg.Pool | None = None
        self._opening: asyncio.Lock | None = None
        self._batches = StatementBatches(self._execute_one, self._execute_many)
        self._lanes: dict[str, Any] = {}  # a pool connection kept for each SQL of execute()
        self._closing = False  # a statement that ends now gives its connection back

    async def execute(self, sql: str, *args: object) -> None:
        await self._batches.execute(sql, args)

    async def _execute_one(self, sql: str, args: tuple[object, ...]) -> None:
        await _twice_if(never_sent, partial(self._execute, sql, args))

    async def _execute_many(self, sql: str, rows: Sequence[tuple[object, ...]]) -> None:
        await _twice_if(never_sent, partial(self._execute, sql, rows, many=True))

    async def _execute(self, sql: str, args: Any, *, many: bool = False) -> None:
        """``sql`` on its lane: a pool connection kept for it between statements. At most one
        statement of a SQL is on its way at a time (:mod:`agentloom.storage.batches`), so a
        lane is never shared; keeping it spares a checkout and a release a statement (asyncpg
        releases through a task and a timer: 6% of a stored response's instructions)."""
        conn = self._lanes.pop(sql, None)
        if conn is None or not _open(conn):  # none yet, or the server closed it meanwhile
            if conn is not None:
                await self._release(conn)
            conn = await self._checkout()
        kept = False
        try:
            with _storable_text():
                if many:
                    await conn.executemany(sql, args)
                else:
                    await conn.execute(sql, *args)
            kept = True
        except Exception as exc:
            if connection_lost(exc):
                # the pool opens another in its place (one closed is already released)
                with contextlib.suppress(asyncpg.InterfaceError):
                    conn.terminate()
            else:
                kept = True  # the statement failed, its connection is fine
            raise
        finally:  # cancelled, lost or closing: back to the pool, which settles it
            if kept and sql not in self._lanes and not self._closing:
                self._lanes[sql] = conn
            else:
                await self._release(conn)

    async def _checkout(self) -> Any:
        pool = self._pool or await self._first_pool()
        return await pool.acquire()

    async def _release(self, conn: Any) -> None:
        assert self._pool is not None, "a connection came from it"
        with contextlib.suppress(asyncpg.InterfaceError):
            await self._pool.release(conn)

    async def fetch(self, sql: str, *args: object) -> list[Sequence[Any]]:
        return await _twice_if(connection_lost, partial(self._fetch, sql, args))

    async def _fetch(self, sql: str, args: tuple[object, ...]) -> list[Sequence[Any]]:
        pool = self._pool or await self._first_pool()
        async with pool.acquire() as conn:
            try:
                with _storable_text():
                    rows: list[Sequence[Any]] = await conn.fetch(sql, *args)
                    return rows
            except Exception as exc:
                if connection_lost(exc):
                    with contextlib.suppress(asyncpg.InterfaceError):
                        conn.terminate()
                raise

    async def _first_pool(self) -> asyncpg.Pool:
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if self._pool is None:
                self._pool = await self._open_pool()
            return self._pool

    async def read(self, fn: Callable[[Connection], T]) -> T:
        with _storable_text():
            return await _twice_if(connection_lost, partial(self._run, self._reader, fn))

    def pools(self) -> list[PoolUse]:
        uses = [
            sqlalchemy_use("transactions", self.engine.sync_engine.pool),
            sqlalchemy_use("autocommit", self._reader.sync_engine.pool),
        ]
        if self._pool is not None:
            size, idle = self._pool.get_size(), self._pool.get_idle_size()
            uses.append(PoolUse("statements", size - idle, idle))
        return uses

    async def write(self, fn: Callable[[Connection], T], *, brief: bool = False) -> T:
        with _storable_text():
            return await _twice_if(_uncommitted, partial(self._write, fn))

    async def _write(self, fn: Callable[[Connection], T]) -> T:
        """``fn`` in a transaction; a failure before its ``COMMIT`` reached the server comes as
        :class:`_Uncommitted` (the transaction is rolled back, so it may run again)."""
        async with self.engine.connect() as conn:
            try:
                result = await conn.run_sync(fn)
            except Exception as exc:
                raise _Uncommitted(exc) from exc
            try:
                await conn.commit()
            except Exception as exc:
                if never_sent(exc):  # refused before it left: the server rolls back
                    raise _Uncommitted(exc) from exc
                raise
            return result

    async def write_statement(self, fn: Callable[[Connection], T]) -> T:
        with _storable_text():
            return await _twice_if(never_sent, partial(self._run, self._reader, fn))

    async def _run(self, engine: AsyncEngine, fn: Callable[[Connection], T]) -> T:
        async with engine.connect() as conn:
            return await conn.run_sync(fn)

    async def aclose(self) -> None:
        await self.engine.dispose()
        await self._reader.dispose()
        # the pool closes once every connection is back: the idle lanes now, one in use when
        # its statement ends
        self._closing = True
        lanes, self._lanes = list(self._lanes.values()), {}
        for conn in lanes:
            await self._release(conn)
        if self._pool is not None:
            await self._pool.close()


def _open(conn: Any) -> bool:
    """Whether a kept pool connection can run a statement: not closed, and not taken back by
    the pool (it does so itself when the server closes it)."""
    try:
        return not conn.is_closed()
    except asyncpg.InterfaceError:  # released back to the pool
        return False


class _Uncommitted(Exception):
    """A transaction failed before its ``COMMIT`` was sent: nothing of it took effect."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def _uncommitted(error: Exception) -> bool:
    return isinstance(error, _Uncommitted) and connection_lost(error.error)


async def _twice_if(retry: Callable[[Exception], bool], attempt: Callable[[], Awaitable[T]]) -> T:
    """``attempt()``, once more if its error passes ``retry``; a lost connection is then
    :class:`DatabaseUnavailableError`, any other error raised as it was (raised outside the
    ``except`` block, so that its own cause and context are kept)."""
    try:
        return await attempt()
    except Exception as exc:
        error = exc
    if not retry(error):
        raise _told(error)
    # The event that killed one connection (a restart, ``pg_terminate_backend``) usually killed
    # the pooled ones too; a moment lets asyncpg see their sockets close, so the pools hand out
    # fresh connections instead of the dying ones.
    await asyncio.sleep(RETRY_AFTER)
    try:
        return await attempt()
    except Exception as exc:
        error = exc
    raise _told(error)


def _told(error: Exception) -> Exception:
    """What the caller is told of ``error``: the error itself (unwrapped), or that the
    database is unavailable (the driver's words go to the log: they may quote SQL)."""
    if isinstance(error, _Uncommitted):
        error = error.error
    if not connection_lost(error):
        return error
    log.warning("lost the database connection: %s", driver_words(error))
    unavailable = DatabaseUnavailableError(
        "The database is unavailable: the connection to it was lost. Please try again shortly."
    )
    unavailable.__cause__ = error
    return unavailable


def scalar_count(table: sa.Table) -> Callable[[Connection], int]:
    """A read function counting the rows of ``table`` (for tests and diagnostics)."""

    def count(conn: Connection) -> int:
        return int(conn.scalar(sa.select(sa.func.count()).select_from(table)) or 0)

    return count


class TracedRunner:
    """``runner`` with a span for each piece of database work (with tracing on): ``db
    {function}`` (``db.system.name``, ``db.operation.name``: the storage function's name)."""

    def __init__(self, runner: Runner, tracing: Tracing) -> None:
        self._runner = runner
        self._tracing = tracing
        self.dialect = runner.dialect
        system = "postgresql" if runner.dialect == "postgresql" else runner.dialect
        self._system = system

    def _span(self, operation: str) -> Leaf:
        attributes = {"db.system.name": self._system, "db.operation.name": operation}
        return self._tracing.leaf(f"db {operation}", attributes, kind=self._tracing.kind.CLIENT)

    async def read(self, fn: Callable[[Connection], T]) -> T:
        with self._span(_name(fn)):
            return await self._runner.read(fn)

    async def write(self, fn: Callable[[Connection], T], *, brief: bool = False) -> T:
        with self._span(_name(fn)):
            return await self._runner.write(fn, brief=brief)

    async def write_statement(self, fn: Callable[[Connection], T]) -> T:
        with self._span(_name(fn)):
            return await self._runner.write_statement(fn)

    async def execute(self, sql: str, *args: object) -> None:
        with self._span(sql.split(None, 1)[0].upper() if sql.strip() else "execute"):
            await self._runner.execute(sql, *args)

    async def fetch(self, sql: str, *args: object) -> list[Sequence[Any]]:
        with self._span(sql.split(None, 1)[0].upper() if sql.strip() else "fetch"):
            return await self._runner.fetch(sql, *args)

    async def aclose(self) -> None:
        await self._runner.aclose()

    def pools(self) -> list[PoolUse]:
        return self._runner.pools()


def sqlalchemy_use(name: str, pool: Pool) -> PoolUse:
    """A SQLAlchemy pool's connections (a pool that does not count them shows none)."""
    if not isinstance(pool, QueuePool):
        return PoolUse(name, 0, 0)
    return PoolUse(name, pool.checkedout(), pool.checkedin())


def _name(fn: Callable[..., object]) -> str:
    """A storage function's name (a ``partial``'s function's)."""
    while isinstance(fn, partial):
        fn = fn.func
    return getattr(fn, "__name__", type(fn).__name__).lstrip("_")
