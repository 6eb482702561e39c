"""Rate limits per project and model, and the shared counters that enforce them.

A counter is one row per (project, model, window kind, window start), incremented by an upsert
that returns the new value: atomic on SQLite and PostgreSQL, so every server process sharing
the database counts against the same limit.
"""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.frozen import frozen
from agentloom.storage import schema
from agentloom.storage.projects import bump_epoch
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import across_projects
from agentloom.storage.upsert import insert as upsert

L = schema.rate_limits
W = schema.rate_windows


@frozen
class LimitRow:
    model: str
    max_requests_per_1_minute: int = 0  # 0: no limit
    max_tokens_per_1_minute: int = 0
    max_requests_per_1_day: int = 0

    @property
    def limited(self) -> bool:
        return any(
            (
                self.max_requests_per_1_minute,
                self.max_tokens_per_1_minute,
                self.max_requests_per_1_day,
            )
        )


@frozen
class Counts:
    """A project's use of one model in the current minute and day, this request included."""

    minute_requests: int
    minute_tokens: int
    day_requests: int


class SqlRateLimitStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    async def limits(self, project_id: str) -> dict[str, LimitRow]:
        return await self._runner.read(partial(_limits, project_id))

    async def set_limit(self, project_id: str, row: LimitRow) -> None:
        await self._runner.write(partial(_set_limit, project_id, row))

    async def hit(
        self,
        project_id: str,
        model: str,
        *,
        minute: int,
        day: int,
        requests: int = 1,
        tokens: int = 0,
    ) -> Counts:
        """Count ``requests`` (in the minute starting at ``minute`` and the day at ``day``) and
        ``tokens`` (in the minute); the counts afterwards."""
        counted = partial(_hit, project_id, model, minute, day, requests, tokens)
        return await self._runner.write(counted)

    async def prune(self, before: int) -> None:
        """Forget windows that started before ``before``."""
        await self._runner.write(partial(_prune, before))


def _limits(project_id: str, conn: Connection) -> dict[str, LimitRow]:
    rows = conn.execute(sa.select(L).where(L.c.project_id == project_id))
    return {row.model: _limit(row) for row in rows}


def _limit(row: Any) -> LimitRow:
    return LimitRow(
        row.model,
        row.max_requests_per_1_minute,
        row.max_tokens_per_1_minute,
        row.max_requests_per_1_day,
    )


def _insert(conn: Connection, table: sa.Table) -> Any:
    return upsert(conn, table)


def _set_limit(project_id: str, row: LimitRow, conn: Connection) -> None:
    values = {"project_id": project_id, **asdict(row)}
    insert = _insert(conn, L).values(**values)
    changes = {k: insert.excluded[k] for k in values if k not in ("project_id", "model")}
    conn.execute(
        insert.on_conflict_do_update(index_elements=[L.c.project_id, L.c.model], set_=changes)
    )
    bump_epoch(conn)  # the limits travel with each process's cached project policy


def _bump(
    project_id: str,
    model: str,
    window: str,
    start: int,
    requests: int,
    tokens: int,
    conn: Connection,
) -> tuple[int, int]:
    values = {
        "project_id": project_id,
        "model": model,
        "window": window,
        "start": start,
        "requests": requests,
        "tokens": tokens,
    }
    insert = _insert(conn, W).values(**values)
    statement = insert.on_conflict_do_update(
        index_elements=[W.c.project_id, W.c.model, W.c.window, W.c.start],
        set_={"requests": W.c.requests + requests, "tokens": W.c.tokens + tokens},
    ).returning(W.c.requests, W.c.tokens)
    row = conn.execute(statement).one()
    return int(row.requests), int(row.tokens)


def _hit(
    project_id: str,
    model: str,
    minute: int,
    day: int,
    requests: int,
    tokens: int,
    conn: Connection,
) -> Counts:
    minute_requests, minute_tokens = _bump(project_id, model, "m", minute, requests, tokens, conn)
    day_requests, _ = _bump(project_id, model, "d", day, requests, 0, conn)
    return Counts(minute_requests, minute_tokens, day_requests)


def _prune(before: int, conn: Connection) -> None:
    conn.execute(across_projects(W.delete().where(W.c.start < before)))
