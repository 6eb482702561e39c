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

from agentloom.frozen import frozen
from agentloom.storage import schema
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import across_projects
from agentloom.storage.spend import add_spend, month_of

U = schema.usage_records
VS = schema.vector_stores
VF = schema.vector_store_files
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
    "moderation_requests",
    "moderation_tokens",
    "cost_input",
    "cost_cached",
    "cost_output",
    "cost_embeddings",
)
GROUPS = {"project_id": U.c.project_id, "api_key_id": U.c.key_id, "model": U.c.model}


@frozen
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
    moderation_requests: int = 0
    moderation_tokens: int = 0
    cost_input: int = 0  # nano-dollars (10^-9 USD): uncached input tokens (and moderations')
    cost_cached: int = 0  # cached input tokens
    cost_output: int = 0
    cost_embeddings: int = 0

    @property
    def cost(self) -> int:
        """Nano-dollars, all of it."""
        return self.cost_input + self.cost_cached + self.cost_output + self.cost_embeddings

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
        self.moderation_requests += other.moderation_requests
        self.moderation_tokens += other.moderation_tokens
        self.cost_input += other.cost_input
        self.cost_cached += other.cost_cached
        self.cost_output += other.cost_output
        self.cost_embeddings += other.cost_embeddings


@frozen
class UsageQuery:
    start: int  # unix seconds, inclusive
    end: int  # exclusive
    width: int  # seconds per bucket
    group_by: tuple[str, ...] = ()  # of GROUPS
    project_ids: tuple[str, ...] = ()
    key_ids: tuple[str, ...] = ()
    models: tuple[str, ...] = ()


@frozen
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

    async def stored_bytes(
        self, start: int, end: int, width: int, project_ids: tuple[str, ...] = ()
    ) -> dict[int, dict[str, int]]:
        """Bytes of the vector store files there are, by the bucket they were added in (those
        added before ``start``: in the first) and project."""
        return await self._runner.read(partial(_stored_bytes, start, end, width, project_ids))


def _add(rows: list[tuple[UsageKey, UsageCounts]], conn: Connection) -> None:
    # each row names its project: a process's usage of every project, written at once
    values = [{**asdict(key), **asdict(counts)} for key, counts in rows]
    conn.execute(across_projects(U.insert()), values)
    spent: dict[tuple[str, int], int] = {}
    for key, counts in rows:
        if counts.cost:
            at = (key.project_id, month_of(key.minute))
            spent[at] = spent.get(at, 0) + counts.cost
    add_spend(conn, spent)


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


def _stored_bytes(
    start: int, end: int, width: int, project_ids: tuple[str, ...], conn: Connection
) -> dict[int, dict[str, int]]:
    created = sa.cast(VF.c.created_at, sa.BigInteger)  # to the second
    added = (created - start) // width
    bucket = (start + sa.case((created < start, 0), else_=added) * width).label("bucket")
    select = across_projects(
        sa.select(bucket, VS.c.project_id, sa.func.sum(VF.c.usage_bytes).label("size"))
    )
    select = select.join(VS, VS.c.id == VF.c.vector_store_id).where(VF.c.created_at < end)
    if project_ids:
        select = select.where(VS.c.project_id.in_(project_ids))
    found: dict[int, dict[str, int]] = {}
    for row in conn.execute(select.group_by(bucket, VS.c.project_id)):
        found.setdefault(int(row.bucket), {})[row.project_id] = int(row.size or 0)
    return found
