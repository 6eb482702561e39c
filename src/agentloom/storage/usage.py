"""Usage records (per minute, project, key and model) and their sums over time buckets.

Server processes aggregate in memory and add rows every second or so (see
:mod:`agentloom.services.organization.usage`); a minute may so have several rows, which the
reads sum.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.storage import schema
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import across_projects

U = schema.usage_records
COUNTS = (
    "requests",
    "input_tokens",
    "cached_tokens",
    "output_tokens",
    "reasoning_tokens",
    "file_search_calls",
    "web_search_calls",
    "code_interpreter_sessions",
    "mcp_calls",
    "embedding_requests",
    "embedding_tokens",
)
GROUPS = {"project_id": U.c.project_id, "api_key_id": U.c.key_id, "model": U.c.model}


@dataclass(frozen=True, slots=True)
class UsageKey:
    minute: int  # unix seconds, a multiple of 60
    project_id: str
    key_id: str | None
    model: str


@dataclass(slots=True)
class UsageCounts:
    requests: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    file_search_calls: int = 0
    web_search_calls: int = 0
    code_interpreter_sessions: int = 0
    mcp_calls: int = 0
    embedding_requests: int = 0
    embedding_tokens: int = 0

    def add(self, other: UsageCounts) -> None:
        """Field by field, spelled out: it runs for every response (a loop over ``COUNTS``
        with getattr and setattr took three times as long)."""
        self.requests += other.requests
        self.input_tokens += other.input_tokens
        self.cached_tokens += other.cached_tokens
        self.output_tokens += other.output_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.file_search_calls += other.file_search_calls
        self.web_search_calls += other.web_search_calls
        self.code_interpreter_sessions += other.code_interpreter_sessions
        self.mcp_calls += other.mcp_calls
        self.embedding_requests += other.embedding_requests
        self.embedding_tokens += other.embedding_tokens


@dataclass(frozen=True, slots=True)
class UsageQuery:
    start: int  # unix seconds, inclusive
    end: int  # exclusive
    width: int  # seconds per bucket
    group_by: tuple[str, ...] = ()  # of GROUPS
    project_ids: tuple[str, ...] = ()
    key_ids: tuple[str, ...] = ()
    models: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class UsageTotal:
    bucket: int  # the bucket's start
    groups: dict[str, str | None]
    counts: UsageCounts = field(default_factory=UsageCounts)


class SqlUsageStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    async def add(self, rows: Sequence[tuple[UsageKey, UsageCounts]]) -> None:
        if rows:
            await self._runner.write(partial(_add, list(rows)))

    async def totals(self, query: UsageQuery) -> list[UsageTotal]:
        """Sums per bucket (and group), buckets in order; buckets without usage are absent."""
        return await self._runner.read(partial(_totals, query))


def _add(rows: list[tuple[UsageKey, UsageCounts]], conn: Connection) -> None:
    # each row names its project: a process's usage of every project, written at once
    values = [{**asdict(key), **asdict(counts)} for key, counts in rows]
    conn.execute(across_projects(U.insert()), values)


def _totals(query: UsageQuery, conn: Connection) -> list[UsageTotal]:
    bucket = (query.start + ((U.c.minute - query.start) // query.width) * query.width).label(
        "bucket"
    )
    groups = [GROUPS[name].label(name) for name in query.group_by]
    sums = [sa.func.sum(U.c[name]).label(name) for name in COUNTS]
    select = across_projects(sa.select(bucket, *groups, *sums)).where(
        U.c.minute >= query.start, U.c.minute < query.end
    )
    for column, wanted in (
        (U.c.project_id, query.project_ids),
        (U.c.key_id, query.key_ids),
        (U.c.model, query.models),
    ):
        if wanted:
            select = select.where(column.in_(wanted))
    select = select.group_by(bucket, *groups).order_by(bucket, *groups)
    return [_total(row, query.group_by) for row in conn.execute(select)]


def _total(row: Any, group_by: tuple[str, ...]) -> UsageTotal:
    counts = UsageCounts(**{name: int(getattr(row, name) or 0) for name in COUNTS})
    return UsageTotal(int(row.bucket), {name: getattr(row, name) for name in group_by}, counts)
