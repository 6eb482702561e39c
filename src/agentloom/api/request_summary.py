"""The request log's summary (agentloom's own object, ``requests.summary``): requests, errors,
tokens, cost (dollars) and latency over time, in all, and per project, model and endpoint."""

from __future__ import annotations

from typing import Literal

from agentloom.api.wire import Nullable, WireModel

__all__ = ["RequestStatsObject", "RequestSummary", "RequestSummaryBucket", "RequestSummaryGroup"]

BucketWidth = Literal["1m", "1h", "1d"]


class RequestStatsObject(WireModel):
    """What a set of requests used: ``errors`` those with a status of 400 and up or an error
    code, ``cost`` in dollars, latencies in milliseconds (``null`` for no requests; the median
    and 95th percentile estimated from a histogram, within the bucket they fall in)."""

    requests: int
    errors: int
    input_tokens: int
    input_cached_tokens: int
    output_tokens: int
    cost: float
    latency_ms_mean: Nullable[float] = None
    latency_ms_p50: Nullable[float] = None  # estimated from a histogram (see the docs)
    latency_ms_p95: Nullable[float] = None
    latency_ms_max: Nullable[float] = None


class RequestSummaryBucket(RequestStatsObject):
    """The requests created from ``start_time`` until ``end_time`` (unix seconds)."""

    object: Literal["bucket"] = "bucket"
    start_time: int
    end_time: int


class RequestSummaryGroup(RequestStatsObject):
    """The requests of one project, model and endpoint in the whole span."""

    project_id: str
    model: Nullable[str] = None
    endpoint: str


class RequestSummary(WireModel):
    """Every bucket of the span (zeros where nothing came in), the span's totals, and its
    groups, the busiest first."""

    object: Literal["requests.summary"] = "requests.summary"
    bucket_width: BucketWidth
    start_time: int
    end_time: int
    buckets: list[RequestSummaryBucket]
    totals: RequestStatsObject
    groups: list[RequestSummaryGroup]
