"""The request log summed up: requests, errors, tokens, cost and latency over time (buckets of
a fixed width from a start), in all, and per project, model and endpoint.

The database does the sums (one ``GROUP BY`` over the time buckets, one over the groups; the
totals are the buckets' summed), reading the span's rows by the log's ``created_at`` index and
sending back a row a bucket and a row a group, latency quantiles estimated from a histogram
counted beside the sums (:mod:`agentloom.storage.latency_histogram`); a bucket without
requests is left out (the caller fills in the zeros).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.frozen import frozen
from agentloom.storage import schema
from agentloom.storage.latency_histogram import BOUNDS_MS, quantile, summed
from agentloom.storage.request_log import FAILED, RequestLogQuery, log_conditions
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import across_projects

__all__ = [
    "RequestStats",
    "RequestSummaryQuery",
    "SqlRequestSummaries",
    "Summary",
    "SummedGroup",
]

R = schema.request_log


@frozen
class RequestSummaryQuery:
    filters: RequestLogQuery  # its since/until are the span; after, limit and order unused
    start: int  # the first bucket's start (unix seconds)
    width: int  # a bucket's width (seconds)
    groups: int = 100  # at most this many groups, the busiest first


@frozen
class RequestStats:
    requests: int
    errors: int
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    cost: int  # nano-dollars
    latency_ms_mean: float | None
    latency_ms_max: float | None
    timed: int = 0  # requests with a latency
    at_most: tuple[int, ...] = ()  # how many took at most each of BOUNDS_MS (cumulative)

    def latency_ms_quantile(self, q: float) -> float | None:
        """The ``q`` quantile of the latencies, estimated from :attr:`at_most`."""
        if not self.at_most:
            return None
        return quantile(q, self.at_most, self.timed, self.latency_ms_max)


@frozen
class SummedGroup:
    project_id: str
    model: str | None
    endpoint: str
    stats: RequestStats


@frozen
class Summary:
    buckets: dict[int, RequestStats]  # a bucket's index (from the start) to its sums
    totals: RequestStats
    groups: list[SummedGroup]


def _sums() -> list[sa.ColumnElement[Any]]:
    return [
        sa.func.count().label("requests"),
        sa.func.coalesce(sa.func.sum(sa.case((FAILED, 1), else_=0)), 0).label("errors"),
        sa.func.coalesce(sa.func.sum(R.c.input_tokens), 0).label("input_tokens"),
        sa.func.coalesce(sa.func.sum(R.c.cached_tokens), 0).label("cached_tokens"),
        sa.func.coalesce(sa.func.sum(R.c.output_tokens), 0).label("output_tokens"),
        sa.func.coalesce(sa.func.sum(R.c.cost), 0).label("cost"),
        sa.func.avg(R.c.latency_ms).label("latency_ms_mean"),
        sa.func.max(R.c.latency_ms).label("latency_ms_max"),
        sa.func.count(R.c.latency_ms).label("timed"),
        *(
            sa.func.coalesce(sa.func.sum(sa.case((R.c.latency_ms <= bound, 1), else_=0)), 0).label(
                f"at_most_{bound}"
            )
            for bound in BOUNDS_MS
        ),
    ]


def _stats(row: Any) -> RequestStats:
    mean, most = row.latency_ms_mean, row.latency_ms_max
    return RequestStats(
        requests=int(row.requests),
        errors=int(row.errors),
        input_tokens=int(row.input_tokens),
        cached_tokens=int(row.cached_tokens),
        output_tokens=int(row.output_tokens),
        cost=int(row.cost),  # PostgreSQL's sum of a bigint is a numeric
        latency_ms_mean=None if mean is None else float(mean),
        latency_ms_max=None if most is None else float(most),
        timed=int(row.timed),
        at_most=tuple(int(row._mapping[f"at_most_{bound}"]) for bound in BOUNDS_MS),
    )


def _total(parts: list[RequestStats]) -> RequestStats:
    """The buckets' sums summed (a scan of the log fewer than a query of its own)."""
    requests = sum(p.requests for p in parts)
    timed = [(p.latency_ms_mean, p.requests) for p in parts if p.latency_ms_mean is not None]
    highest = [p.latency_ms_max for p in parts if p.latency_ms_max is not None]
    return RequestStats(
        requests=requests,
        errors=sum(p.errors for p in parts),
        input_tokens=sum(p.input_tokens for p in parts),
        cached_tokens=sum(p.cached_tokens for p in parts),
        output_tokens=sum(p.output_tokens for p in parts),
        cost=sum(p.cost for p in parts),
        latency_ms_mean=sum(m * n for m, n in timed) / requests if timed else None,
        latency_ms_max=max(highest, default=None),
        timed=sum(p.timed for p in parts),
        at_most=summed([p.at_most for p in parts]),
    )


def _bucket(conn: Connection, query: RequestSummaryQuery) -> sa.ColumnElement[int]:
    """A row's bucket: whole widths from the start (rows start there or later: a cast to an
    integer truncates on SQLite, where floor() may be missing; PostgreSQL's cast rounds)."""
    offset = (R.c.created_at - float(query.start)) / float(query.width)
    if conn.dialect.name == "sqlite":
        return sa.cast(offset, sa.Integer)
    return sa.cast(sa.func.floor(offset), sa.Integer)


def _summarize(query: RequestSummaryQuery, conn: Connection) -> Summary:
    where = log_conditions(query.filters)
    bucket = _bucket(conn, query).label("bucket")
    per_bucket = across_projects(sa.select(bucket, *_sums())).where(*where).group_by(bucket)
    keys = (R.c.project_id, R.c.model, R.c.endpoint)
    per_group = (
        across_projects(sa.select(*keys, *_sums()))
        .where(*where)
        .group_by(*keys)
        .order_by(sa.desc("requests"), *keys)
        .limit(query.groups)
    )
    buckets = {int(row.bucket): _stats(row) for row in conn.execute(per_bucket)}
    return Summary(
        buckets=buckets,
        totals=_total(list(buckets.values())),
        groups=[
            SummedGroup(row.project_id, row.model, row.endpoint, _stats(row))
            for row in conn.execute(per_group)
        ],
    )


class SqlRequestSummaries:
    """The request log's sums, read across projects (the caller's filters name the project)."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    async def summarize(self, query: RequestSummaryQuery) -> Summary:
        return await self._runner.read(partial(_summarize, query))
