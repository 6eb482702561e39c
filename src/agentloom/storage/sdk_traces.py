"""The store of traces the Agents SDK exports (``POST /v1/traces/ingest``): a row per trace and
per span, a project's. A trace or span sent again replaces the earlier row (the SDK retries a
batch it is not sure arrived). Traces are listed in the order they came, keyset-paginated on
``seq``, all of them or those with a span of one response.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.frozen import frozen
from agentloom.storage import schema
from agentloom.storage.base import Order, Page
from agentloom.storage.pages import keyset_page
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import Project, ProjectRunner

T = schema.sdk_traces
S = schema.sdk_spans
_TRACE = (T.c.id, T.c.created_at, T.c.workflow_name, T.c.group_id, T.c.metadata)
_SPAN = (S.c.id, S.c.trace_id, S.c.response_id, S.c.body)


@frozen
class SdkTraceRow:
    id: str
    created_at: float  # unix seconds: when it arrived
    workflow_name: str | None
    group_id: str | None
    metadata: str  # JSON object


@frozen
class SdkSpanRow:
    id: str
    trace_id: str
    response_id: str | None  # the response a ``response`` span names
    body: str  # the span as exported, JSON


@frozen
class SdkTraceQuery:
    after: str | None = None
    limit: int = 20
    order: Order = "desc"
    response_id: str | None = None  # only traces with a span of this response


class SqlSdkTraceStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = ProjectRunner(runner)

    async def ingest(self, traces: Sequence[SdkTraceRow], spans: Sequence[SdkSpanRow]) -> None:
        await self._runner.write(partial(_ingest, traces, spans))

    async def get(self, trace_id: str) -> tuple[SdkTraceRow, list[SdkSpanRow]] | None:
        """The trace and its spans (in the order they came), or ``None``."""
        return await self._runner.read(partial(_get, trace_id))

    async def list_page(self, query: SdkTraceQuery) -> Page[SdkTraceRow] | None:
        """``None`` when the ``after`` trace does not exist (in this project)."""
        return await self._runner.read(partial(_list, query))


def _ingest(
    traces: Sequence[SdkTraceRow], spans: Sequence[SdkSpanRow], project: Project, conn: Connection
) -> None:
    for table, rows, columns in ((T, traces, _TRACE), (S, spans, _SPAN)):
        if not rows:
            continue
        ids = [row.id for row in rows]
        conn.execute(project.delete(table, table.c.id.in_(ids)))
        values = [{c.name: getattr(row, c.name) for c in columns} for row in _last_of_each(rows)]
        conn.execute(project.insert(table), values)


def _last_of_each(rows: Sequence[Any]) -> list[Any]:
    """One row per id: the last sent."""
    return list({row.id: row for row in rows}.values())


def _get(
    trace_id: str, project: Project, conn: Connection
) -> tuple[SdkTraceRow, list[SdkSpanRow]] | None:
    found = conn.execute(sa.select(*_TRACE).where(project.rows(T, T.c.id == trace_id))).first()
    if found is None:
        return None
    spans = conn.execute(
        sa.select(*_SPAN).where(project.rows(S, S.c.trace_id == trace_id)).order_by(S.c.seq)
    )
    return _trace(found), [_span(row) for row in spans]


def _list(query: SdkTraceQuery, project: Project, conn: Connection) -> Page[SdkTraceRow] | None:
    criteria = []
    if query.response_id is not None:
        spans = sa.select(S.c.trace_id).where(project.rows(S, S.c.response_id == query.response_id))
        criteria.append(T.c.id.in_(spans))
    select = sa.select(*_TRACE).where(project.rows(T, *criteria))
    cursor = None
    if query.after is not None:
        cursor = conn.scalar(sa.select(T.c.seq).where(project.rows(T, T.c.id == query.after)))
        if cursor is None:
            return None
    return keyset_page(
        conn, select, T.c.seq, order=query.order, limit=query.limit, row=_trace, after=cursor
    )


def _trace(row: Any) -> SdkTraceRow:
    return SdkTraceRow(
        id=row.id,
        created_at=row.created_at,
        workflow_name=row.workflow_name,
        group_id=row.group_id,
        metadata=row.metadata,
    )


def _span(row: Any) -> SdkSpanRow:
    return SdkSpanRow(id=row.id, trace_id=row.trace_id, response_id=row.response_id, body=row.body)
