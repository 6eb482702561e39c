"""Latency quantiles from a histogram the database can count: how many requests took at most
each of :data:`BOUNDS_MS`, summed in the same ``GROUP BY`` as the rest of a summary (SQLite has
no percentile function, and reading every latency back would cost a row a request).

A quantile is estimated as Prometheus' ``histogram_quantile`` does: found in the first bound that
holds its rank, linearly between that bound and the one below, never above the highest latency
seen. Its error is at most the width of that bucket (the bounds grow by about 2.5x).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

__all__ = ["BOUNDS_MS", "quantile", "summed"]

BOUNDS_MS: Final = (5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000)


def quantile(q: float, at_most: Sequence[int], timed: int, highest: float | None) -> float | None:
    """The ``q`` quantile (0 < q <= 1) of ``timed`` latencies, ``at_most[i]`` of which took at
    most ``BOUNDS_MS[i]`` ms (cumulative counts); ``None`` without latencies."""
    if timed <= 0 or highest is None:
        return None
    rank = q * timed
    below, lower = 0, 0.0
    for bound, count in zip(BOUNDS_MS, at_most, strict=True):
        if count >= rank and count > below:
            estimate = lower + (bound - lower) * (rank - below) / (count - below)
            return min(estimate, highest)
        below, lower = count, float(bound)
    return highest  # past the last bound: the highest latency is the best estimate


def summed(parts: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """Histograms of disjoint sets of requests, as one."""
    return tuple(sum(counts) for counts in zip(*parts, strict=True)) if parts else _EMPTY


_EMPTY: Final = (0,) * len(BOUNDS_MS)
