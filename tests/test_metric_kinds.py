"""agentloom's lock-free metric values, read back through ``prometheus_client``'s exposition
and its own parser."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from agentloom.metric_kinds import Counter, Gauge, Histogram


def _samples(registry: CollectorRegistry) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = generate_latest(registry).decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_counter_totals_by_labels_with_created() -> None:
    registry = CollectorRegistry()
    calls = Counter("x_calls", "Calls.", ["model"], registry=registry)
    calls.labels("a").inc()
    calls.labels("a").inc(2)
    calls.labels("b").inc()
    found = _samples(registry)
    assert found[("x_calls_total", (("model", "a"),))] == 3
    assert found[("x_calls_total", (("model", "b"),))] == 1
    assert found[("x_calls_created", (("model", "a"),))] > 1e9


def test_histogram_buckets_are_cumulative_and_inclusive() -> None:
    registry = CollectorRegistry()
    buckets = (0.5, 0.1, 1, float("inf"))  # in any order; +Inf given or not
    seconds = Histogram("x_seconds", "Time.", registry=registry, buckets=buckets).labels()
    for value in (0.1, 0.2, 1.0, 7.0):  # a value equal to a bound is in that bound's bucket
        seconds.observe(value)
    found = _samples(registry)
    buckets = {le: found[("x_seconds_bucket", (("le", le),))] for le in ("0.1", "0.5", "1.0")}
    assert buckets == {"0.1": 1, "0.5": 2, "1.0": 3}
    assert found[("x_seconds_bucket", (("le", "+Inf"),))] == 4
    assert generate_latest(registry).decode().count('x_seconds_bucket{le="+Inf"}') == 1
    assert found[("x_seconds_count", ())] == 4
    assert found[("x_seconds_sum", ())] == pytest.approx(8.3)


def test_gauge_moves_and_clears() -> None:
    registry = CollectorRegistry()
    jobs = Gauge("x_jobs", "Jobs.", ["kind"], registry=registry)
    jobs.labels("a").inc(3)
    jobs.labels("a").dec()
    jobs.labels("b").set(7)
    assert _samples(registry)[("x_jobs", (("kind", "a"),))] == 2
    jobs.clear()
    assert not any(name == "x_jobs" for name, _ in _samples(registry))


def test_wrong_label_count_and_taken_names_are_refused() -> None:
    registry = CollectorRegistry()
    calls = Counter("x_calls", "Calls.", ["model"], registry=registry)
    with pytest.raises(ValueError, match="has labels"):
        calls.labels("a", "b")
    with pytest.raises(ValueError, match="Duplicated timeseries"):
        Gauge("x_calls_total", "Again.", registry=registry)
