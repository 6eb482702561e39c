"""Latency quantiles estimated from the request summary's histogram."""

from __future__ import annotations

import bisect
import math
import random

import pytest

from agentloom.storage.latency_histogram import BOUNDS_MS, quantile, summed


def histogram(latencies: list[float]) -> tuple[int, ...]:
    ordered = sorted(latencies)
    return tuple(bisect.bisect_right(ordered, bound) for bound in BOUNDS_MS)


def around(q: float, latencies: list[float]) -> tuple[float, float]:
    """The latencies either side of the ``q`` quantile's rank (the same one at a whole rank)."""
    ordered = sorted(latencies)
    rank = q * len(ordered)
    return ordered[max(0, math.floor(rank) - 1)], ordered[max(0, math.ceil(rank) - 1)]


def bucket_of(value: float) -> tuple[float, float]:
    i = bisect.bisect_left(BOUNDS_MS, value)
    return (0.0 if i == 0 else BOUNDS_MS[i - 1], BOUNDS_MS[i] if i < len(BOUNDS_MS) else 1e12)


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("q", [0.5, 0.95])
def test_an_estimate_lies_in_the_bucket_of_the_true_quantile(seed: int, q: float) -> None:
    rng = random.Random(seed)
    latencies = [rng.lognormvariate(5, 1.2) for _ in range(rng.randint(1, 400))]
    estimate = quantile(q, histogram(latencies), len(latencies), max(latencies))

    assert estimate is not None
    below, above = around(q, latencies)
    low, high = bucket_of(below)[0], bucket_of(above)[1]
    assert low <= estimate <= min(high, max(latencies))


def test_edges() -> None:
    assert quantile(0.5, histogram([]), 0, None) is None
    assert quantile(0.95, histogram([70_000.0, 90_000.0]), 2, 90_000.0) == 90_000.0  # past 60 s
    assert quantile(0.5, histogram([3.0]), 1, 3.0) == 2.5  # halfway into (0, 5]
    assert quantile(1.0, histogram([3.0]), 1, 3.0) == 3.0  # never above the highest
    assert quantile(0.5, histogram([20.0, 20.0]), 2, 20.0) == pytest.approx(17.5)  # (10, 25]


def test_histograms_of_parts_sum_to_the_whole() -> None:
    first, second = [1.0, 30.0, 700.0], [12.0, 4000.0]
    assert summed([histogram(first), histogram(second)]) == histogram(first + second)
    assert summed([]) == (0,) * len(BOUNDS_MS)
