"""The database: SQLAlchemy on SQLite (embedded, WAL) or PostgreSQL (asyncpg).

``Database.connect(url)`` takes ``sqlite:///PATH`` or ``postgresql://user@host:port/db``;
``migrate()`` applies the Alembic migrations shipped in :mod:`agentloom.storage.migrations`
(under an advisory lock on PostgreSQL, so several server processes can start together). A
database already at :data:`~agentloom.storage.migrations.HEAD` costs one read: Alembic (and Mako
and Pygments behind it, ~0.25 s of import) is imported only when there is something to apply.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import asyncpg  # type: ignore[import-untyped]
import sqlalchemy as sa
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.pool import StaticPool

from agentloom.redact import redact_url
from agentloom.storage import migrations, schema
from agentloom.storage.admin_keys import SqlAdminKeyStore
from agentloom.storage.agent_runs import SqlAgentRunStore
from agentloom.storage.agent_sessions import SqlAgentSessionStore
from agentloom.storage.agent_tasks import SqlAgentTaskStore
from agentloom.storage.audit import SqlAuditStore
from agentloom.storage.batch_api import SqlBatchStore
from agentloom.storage.chat_completions import SqlChatCompletionStore
from agentloom.storage.chunks_base import ChunkStore
from agentloom.storage.connection_faults import guard_pool
from agentloom.storage.containers import SqlContainerStore
from agentloom.storage.conversations import SqlConversationStore
from agentloom.storage.events import SqlEventStore
from agentloom.storage.files import SqlFileStore
from agentloom.storage.jobs import SqlJobStore
from agentloom.storage.managed_agents import SqlManagedAgentStore
from agentloom.storage.mcp_connectors import SqlMcpConnectorStore
from agentloom.storage.memories import SqlMemoryStore
from agentloom.storage.people import SqlPeopleStore
from agentloom.storage.projects import SqlProjectStore
from agentloom.storage.prompts import SqlPromptStore
from agentloom.storage.rate_limits import SqlRateLimitStore
from agentloom.storage.request_log import SqlRequestLogStore
from agentloom.storage.request_summary import SqlRequestSummaries
from agentloom.storage.responses import SqlResponseStore
from agentloom.storage.retention import SqlRetentionStore
from agentloom.storage.roles import SqlRoleStore
from agentloom.storage.runner import AsyncRunner, Runner, TracedRunner
from agentloom.storage.schedules import SqlScheduleStore
from agentloom.storage.scoped import across_projects
from agentloom.storage.sdk_traces import SqlSdkTraceStore
from agentloom.storage.spend import SqlSpendStore
from agentloom.storage.sqlite_runner import ThreadRunner
from agentloom.storage.usage import SqlUsageStore
from agentloom.storage.vector_chunks import SqlChunkStore
from agentloom.storage.vector_stores import SqlVectorStoreStore
from agentloom.storage.webhooks import SqlWebhookStore
from agentloom.tracing import active

if TYPE_CHECKING:
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

MIGRATIONS = Path(__file__).parent / "migrations"
_MIGRATION_LOCK = 0x616C6F6F6D  # "aloom": pg_advisory_xact_lock key for migrations
_ACTIVE = ("queued", "in_progress")
DEFAULT_ABANDONED_AFTER = 60.0
DEFAULT_POOL_SIZE = 20

log = logging.getLogger(__name__)


class DatabaseURLError(ValueError):
    """The database URL names a scheme agentloom does not support."""


def driver_url(url: str) -> sa.URL:
    """``sqlite:///p`` (the stdlib driver, in threads); ``postgresql://`` -> ``+asyncpg``."""
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return parsed.set(drivername="sqlite+pysqlite")
    if backend in ("postgresql", "postgres"):
        return parsed.set(drivername="postgresql+asyncpg")
    raise DatabaseURLError(
        f"unsupported database URL {redact_url(url)!r}: use sqlite:///PATH or postgresql://user@host:port/db"
    )


def _runner(url: sa.URL, pool_size: int) -> Runner:
    if url.get_backend_name() != "sqlite":
        return _postgres_runner(url, pool_size)
    memory = url.database in (None, "", ":memory:")
    if not memory and url.database is not None:
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    options: dict[str, Any] = (
        {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}}
        if memory
        else {"pool_size": 8, "max_overflow": 8, "pool_use_lifo": True}  # warm caches first
    )
    sync_engine = create_engine(url, **options)
    event.listen(sync_engine, "connect", _sqlite_pragmas)
    return ThreadRunner(sync_engine, wal=not memory)


def _postgres_runner(url: sa.URL, pool_size: int) -> AsyncRunner:
    """Three pools, their connections opened as the load needs them and kept: the hot path's
    plain asyncpg pool keeps up to ``pool_size`` (a burst beyond waits its turn); SQLAlchemy's
    two (transactions, autocommit reads) keep half as many each and open as many again for a
    burst (closed after use). At most ``3 * pool_size`` connections a process."""
    from sqlalchemy.ext.asyncio import create_async_engine  # PostgreSQL's alone (and the ORM)

    connect_args = _pg_connect_args(url)
    # Every use ends in COMMIT or ROLLBACK, so returning a connection needs no extra reset.
    pool: dict[str, Any] = {
        "pool_size": max(1, pool_size // 2),
        "max_overflow": max(1, pool_size // 2),
        "connect_args": connect_args,
    }
    engine = create_async_engine(url, pool_reset_on_return=None, **pool)
    autocommit = create_async_engine(url, isolation_level="AUTOCOMMIT", **pool)
    guard_pool(engine)  # a connection the server closed is swapped, never handed out
    guard_pool(autocommit)
    dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)

    async def plain_pool() -> Any:
        return await asyncpg.create_pool(
            dsn,
            min_size=0,
            max_size=pool_size,
            max_inactive_connection_lifetime=600.0,
            reset=_keep_session,
            **connect_args,
        )

    return AsyncRunner(engine, autocommit, plain_pool)


async def _keep_session(_conn: object) -> None:
    """A plain-pool connection goes back as it is: its statements never touch the session
    (no LISTEN, SET, advisory lock or cursor), and asyncpg ends any open transaction itself.
    Its default reset (``RESET ALL; UNLISTEN *; ...``) was a second round trip per statement."""


_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


def _pg_connect_args(url: sa.URL) -> dict[str, Any]:
    """``ssl=False`` for a loopback or Unix-socket server unless the URL asks for TLS:
    asyncpg's default (``prefer``) first tries TLS on every new connection, one round trip
    for nothing on a local server."""
    asks = {"ssl", "sslmode"} & set(url.query)
    host = url.host or str(url.query.get("host") or "")
    local = not host or host.startswith("/") or host in _LOOPBACK
    return {"ssl": False} if local and not asks else {}


def _sqlite_pragmas(dbapi_connection: Any, _record: object) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=10000")
    _into_wal(cursor)
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _into_wal(cursor: Any) -> None:
    """Switch a new database file to WAL. The switch needs the file to itself and SQLite does
    not wait for it (``busy_timeout`` does not apply): while another connection migrates the
    new file it fails at once, so it is tried again for up to 10 s."""
    deadline = time.monotonic() + 10.0
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


@cache
def _migrations() -> ScriptDirectory:
    """The shipped migrations, read once a process (~20 ms: every revision file is executed)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(MIGRATIONS))


def _at_head(connection: Connection) -> bool:
    """Whether the database's revision is the shipped head (nothing to apply)."""
    if not sa.inspect(connection).has_table("alembic_version"):
        return False
    found = connection.exec_driver_sql("SELECT version_num FROM alembic_version").all()
    return [row[0] for row in found] == [migrations.HEAD]


def _upgrade(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
    elif not connection.connection.driver_connection.in_transaction:  # type: ignore[union-attr]
        # SQLite runs DDL outside a transaction unless one is open: take the write lock first,
        # so that processes starting together on a new file migrate one after the other
        connection.exec_driver_sql("BEGIN IMMEDIATE")
    with _quiet_alembic():  # its imports log too
        from alembic.operations import Operations
        from alembic.runtime.migration import MigrationContext

        script = _migrations()

        def upgrade_to_head(revision: Any, _context: MigrationContext) -> Any:
            return script._upgrade_revs("head", revision)

        opts = {"script": script, "fn": upgrade_to_head}
        context = MigrationContext.configure(connection, opts=opts)
        before = context.get_current_revision()
        with Operations.context(context):
            context.run_migrations()
        after = context.get_current_revision()
    if after != before:
        steps = _steps(script, before, after)
        log.info("database migrated from %s to %s (%d migrations)", before or "empty", after, steps)


@contextmanager
def _quiet_alembic() -> Iterator[None]:
    """Alembic says a line per plugin and per migration: its own lines are debug output here
    (the upgrade is one line of ours)."""
    logger = logging.getLogger("alembic")
    level = logger.level
    logger.setLevel(max(logging.WARNING, logging.getLogger().level))
    try:
        yield
    finally:
        logger.setLevel(level)


def _steps(script: Any, before: str | None, after: str | None) -> int:
    """How many migrations lead from ``before`` to ``after``."""
    return sum(1 for _ in script.iterate_revisions(after, before))


class Database:
    def __init__(
        self, runner: Runner, *, instance_id: str, abandoned_after: float = DEFAULT_ABANDONED_AFTER
    ) -> None:
        self.runner = runner
        self.instance_id = instance_id
        self.responses = SqlResponseStore(runner, instance_id=instance_id)
        self.conversations = SqlConversationStore(
            runner, instance_id=instance_id, abandoned_after=abandoned_after
        )
        self.prompts = SqlPromptStore(runner)
        self.vector_stores = SqlVectorStoreStore(runner)
        self.vector_chunks: ChunkStore = SqlChunkStore(runner)
        self.files = SqlFileStore(runner)
        self.containers = SqlContainerStore(runner)
        self.chat_completions = SqlChatCompletionStore(runner)
        self.sdk_traces = SqlSdkTraceStore(runner)
        self.mcp_connectors = SqlMcpConnectorStore(runner)
        self.projects = SqlProjectStore(runner)
        self.people = SqlPeopleStore(runner)  # users, invites, groups, project members
        self.roles = SqlRoleStore(runner)
        self.jobs = SqlJobStore(runner)
        self.events = SqlEventStore(runner)
        self.admin_keys = SqlAdminKeyStore(runner)
        self.rate_limits = SqlRateLimitStore(runner)
        self.usage = SqlUsageStore(runner)
        self.request_log = SqlRequestLogStore(runner)  # one row a request of the traffic
        self.request_summaries = SqlRequestSummaries(runner)  # the log's sums over time
        self.spend = SqlSpendStore(runner)  # spend limits, alerts and monthly totals
        self.audit = SqlAuditStore(runner)
        self.webhooks = SqlWebhookStore(runner)
        self.schedules = SqlScheduleStore(runner)
        self.retention = SqlRetentionStore(runner)  # [retention]'s sweep
        self.agent_sessions = SqlAgentSessionStore(runner)  # the agent SDK's sessions and ticks
        self.memories = SqlMemoryStore(runner)  # the agent SDK's memory notes
        self.managed_agents = SqlManagedAgentStore(runner)  # /v1/managed-agents
        self.agent_runs = SqlAgentRunStore(runner)
        self.agent_tasks = SqlAgentTaskStore(runner)
        self.batches = SqlBatchStore(runner)  # /v1/batches

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        instance_id: str,
        abandoned_after: float = DEFAULT_ABANDONED_AFTER,
        pool_size: int = DEFAULT_POOL_SIZE,
    ) -> Database:
        """``abandoned_after``: seconds without a heartbeat after which an instance counts as
        stopped (its responses are failed, its conversation locks taken over). ``pool_size``:
        PostgreSQL connections kept open per pool (see ``_postgres_runner``)."""
        runner: Runner = _runner(driver_url(url), pool_size)
        tracing = active()
        if tracing is not None:
            runner = TracedRunner(runner, tracing)
        return cls(runner, instance_id=instance_id, abandoned_after=abandoned_after)

    @property
    def dialect(self) -> str:
        return self.runner.dialect

    async def migrate(self) -> None:
        if not await self.runner.read(_at_head):
            await self.runner.write(_upgrade)

    async def heartbeat(self) -> None:
        """Record that this instance is alive (see :meth:`fail_abandoned`)."""
        await self.runner.write(partial(_heartbeat, self.instance_id, time.time()))

    async def fail_abandoned(self, after: float) -> int:
        """Fail responses left in progress by instances that stopped: silent for ``after``
        seconds, or (at once) a process of this host that no longer runs."""
        await self.runner.write(_forget_dead_local_instances)
        return await self.runner.write(partial(_fail_abandoned, time.time() - after))

    async def aclose(self) -> None:
        """Leave the set of live instances, then close every connection."""
        await self.runner.write(partial(_leave, self.instance_id))
        await self.runner.aclose()


def _heartbeat(instance_id: str, now: float, conn: Connection) -> None:
    table = schema.instances
    updated = conn.execute(table.update().where(table.c.id == instance_id).values(heartbeat_at=now))
    if updated.rowcount == 0:
        host, pid = socket.gethostname(), os.getpid()
        conn.execute(table.insert().values(id=instance_id, heartbeat_at=now, host=host, pid=pid))


def _forget_dead_local_instances(conn: Connection) -> None:
    """Drop the heartbeat rows of this host's processes that are gone (a crash, a kill -9)."""
    table = schema.instances
    local = conn.execute(
        sa.select(table.c.id, table.c.pid).where(table.c.host == socket.gethostname())
    ).all()
    dead = [row.id for row in local if row.pid is not None and not _running(row.pid)]
    if dead:
        conn.execute(table.delete().where(table.c.id.in_(dead)))


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user
    return True


def _fail_abandoned(since: float, conn: Connection) -> int:
    live = sa.select(schema.instances.c.id).where(schema.instances.c.heartbeat_at >= since)
    table = schema.responses
    jobs = schema.jobs
    background = sa.select(jobs.c.subject).where(jobs.c.status != "done")
    abandoned = sa.and_(
        table.c.status.in_(_ACTIVE),
        sa.or_(table.c.instance_id.is_(None), table.c.instance_id.not_in(live)),
        table.c.id.not_in(background),  # a job's response: its job is taken over instead
    )
    rows = conn.execute(across_projects(sa.select(table.c.id, table.c.body)).where(abandoned)).all()
    for row in rows:
        conn.execute(
            across_projects(table.update())
            .where(sa.and_(table.c.id == row.id, table.c.status.in_(_ACTIVE)))
            .values(status="failed", body=_failed_body(row.body))
        )
    return len(rows)


def _leave(instance_id: str, conn: Connection) -> None:
    conn.execute(schema.instances.delete().where(schema.instances.c.id == instance_id))


def _failed_body(body: str) -> str:
    data = json.loads(body)
    data["status"] = "failed"
    data["error"] = {
        "code": "server_error",
        "message": "The server stopped while this response was in progress.",
    }
    return json.dumps(data)
