"""The request log: one row a request of the traffic, added in batches, read by the admin API.

A server process gathers the entries of the requests it answered and adds them every second
or so with its usage (:mod:`agentloom.services.organization.usage`): one multi-row insert of
every project's rows (marked as such), nothing on a request's own path. Reads are the
organization's: filtered by project, key, model, endpoint, status and time, newest first.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from operator import attrgetter
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.frozen import frozen
from agentloom.request_entry import RequestEntry
from agentloom.storage import schema
from agentloom.storage.base import Order, Page
from agentloom.storage.pages import keyset_page
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import ACROSS_PROJECTS, across_projects

__all__ = ["FAILED", "LoggedRequest", "RequestLogQuery", "SqlRequestLogStore", "log_conditions"]

R = schema.request_log
_COLUMNS = (
    "id",
    "project_id",
    "key_id",
    "user",
    "endpoint",
    "model",
    "deployment",
    "input_tokens",
    "cached_tokens",
    "output_tokens",
    "cost",
    "latency_ms",
    "first_token_ms",
    "status",
    "error_code",
    "response_id",
    "created_at",
    "batch_id",
)


@frozen
class LoggedRequest:
    id: str
    project_id: str
    key_id: str | None
    user: str | None
    endpoint: str
    model: str | None
    deployment: str | None
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    cost: int  # nano-dollars
    latency_ms: float
    first_token_ms: float | None
    status: int
    error_code: str | None
    response_id: str | None
    created_at: float
    batch_id: str | None


@frozen
class RequestLogQuery:
    after: str | None = None  # a request id: the page starts past it
    limit: int = 20
    order: Order = "desc"
    project_ids: tuple[str, ...] = ()
    key_ids: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    endpoints: tuple[str, ...] = ()
    statuses: tuple[int, ...] = ()
    batch_ids: tuple[str, ...] = ()
    errors_only: bool = False  # statuses of 400 and up, and answers carrying an error code
    ok_only: bool = False  # the rest: statuses under 400 without an error code
    since: float | None = None  # created at or after (unix seconds)
    until: float | None = None  # created before


class SqlRequestLogStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    async def add(self, entries: Sequence[RequestEntry]) -> None:
        if entries:
            await self._runner.write(partial(_add, [_values(e) for e in entries]))

    async def list(self, query: RequestLogQuery) -> Page[LoggedRequest] | None:
        """A page of rows; ``None`` when ``after`` names no logged request."""
        return await self._runner.read(partial(_list, query))

    async def get(self, request_id: str) -> LoggedRequest | None:
        """The row of the request (the latest, should a client have sent its id twice)."""
        return await self._runner.read(partial(_get, request_id))


FAILED: sa.ColumnElement[bool] = sa.or_(R.c.status >= 400, R.c.error_code.is_not(None))
"""A failed request: a status of 400 and up, or an answer carrying an error code."""

_values = attrgetter(*_COLUMNS)  # an entry's row, as a tuple in the columns' order

# SQLite's rows go to the DBAPI cursor directly (as the stored responses' do): SQLAlchemy's
# executemany cost about 20 us of CPU a row there; PostgreSQL's insert many values is cheaper.
_NAMES = ", ".join(f'"{column}"' for column in _COLUMNS)
_SQL_INSERT = (
    f"{ACROSS_PROJECTS} INSERT INTO request_log ({_NAMES})"
    f" VALUES ({', '.join('?' for _ in _COLUMNS)})"
)


def _add(values: list[tuple[Any, ...]], conn: Connection) -> None:
    # every project's rows at once: each names its project
    if conn.dialect.name == "sqlite":
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        cursor.executemany(_SQL_INSERT, values)
        return
    rows = [dict(zip(_COLUMNS, row, strict=True)) for row in values]
    conn.execute(across_projects(R.insert()), rows)


def _row(row: Any) -> LoggedRequest:
    return LoggedRequest(*(getattr(row, name) for name in _COLUMNS))


def _get(request_id: str, conn: Connection) -> LoggedRequest | None:
    query = across_projects(sa.select(R)).where(R.c.id == request_id).order_by(R.c.seq.desc())
    row = conn.execute(query.limit(1)).first()
    return None if row is None else _row(row)


def log_conditions(query: RequestLogQuery) -> list[sa.ColumnElement[bool]]:
    """The WHERE clauses of ``query``'s filters (its page's cursor aside)."""
    found: list[sa.ColumnElement[bool]] = []
    for column, wanted in (
        (R.c.project_id, query.project_ids),
        (R.c.key_id, query.key_ids),
        (R.c.model, query.models),
        (R.c.endpoint, query.endpoints),
        (R.c.status, query.statuses),
        (R.c.batch_id, query.batch_ids),
    ):
        if wanted:
            found.append(column.in_(wanted))
    if query.errors_only:
        found.append(FAILED)
    if query.ok_only:
        found.append(sa.not_(FAILED))
    if query.since is not None:
        found.append(R.c.created_at >= query.since)
    if query.until is not None:
        found.append(R.c.created_at < query.until)
    return found


def _filtered(query: RequestLogQuery) -> sa.Select[Any]:
    return across_projects(sa.select(R)).where(*log_conditions(query))


def _list(query: RequestLogQuery, conn: Connection) -> Page[LoggedRequest] | None:
    after = None
    if query.after is not None:
        found = across_projects(sa.select(sa.func.max(R.c.seq))).where(R.c.id == query.after)
        after = conn.execute(found).scalar()
        if after is None:
            return None
    return keyset_page(
        conn, _filtered(query), R.c.seq, order=query.order, limit=query.limit, row=_row, after=after
    )
