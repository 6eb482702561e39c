"""Metrics across worker processes: each publishes its values to the run's directory, and the
one answering a scrape adds the others in (counters and histograms of every process of the
run, gauges of the living ones, shared gauges once)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from agentloom.metrics import Metrics
from agentloom.metrics_shared import SharedMetrics


def _samples(exposition: bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(exposition.decode()):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def _worker(metrics: Metrics, directory: Path, pid: int) -> None:
    """Another process's published values, as it would write them."""
    families = {family.name: family.dump() for family in metrics.families()}
    (directory / f"{pid}.json").write_text(json.dumps({"pid": pid, "families": families}))


def _gone_pid() -> int:
    """The pid of a process that has ended (and was reaped)."""
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(ended.stdout)


def test_counters_histograms_and_gauges_add_up_across_workers(tmp_path: Path) -> None:
    here, alive, dead = Metrics(), Metrics(), Metrics()
    for metrics, n in ((here, 1), (alive, 2), (dead, 4)):
        for _ in range(n):
            metrics.answered("POST", "/v1/responses", 200, 0.02)
        metrics.in_flight.inc(n)
        metrics.jobs.labels("response", "queued").set(7)  # read from the database: the same
    _worker(alive, tmp_path, os.getppid())
    _worker(dead, tmp_path, _gone_pid())

    seen = _samples(SharedMetrics(here, tmp_path).exposition())

    route = (("method", "POST"), ("route", "/v1/responses"), ("status", "200"))
    assert seen[("agentloom_http_requests_total", route)] == 7  # the dead worker's count stays
    timed = (("method", "POST"), ("route", "/v1/responses"))
    assert seen[("agentloom_http_request_duration_seconds_count", timed)] == 7
    assert seen[("agentloom_http_request_duration_seconds_sum", timed)] == 7 * 0.02
    assert seen[("agentloom_http_requests_in_flight", ())] == 3  # the living workers' gauges
    assert seen[("agentloom_jobs", (("kind", "response"), ("status", "queued")))] == 7  # once
    assert (tmp_path / f"{os.getpid()}.json").exists()  # this worker's published too


def test_an_unreadable_file_is_skipped(tmp_path: Path) -> None:
    here = Metrics()
    here.answered("GET", "/v1/models", 200, 0.001)
    (tmp_path / "123.json").write_text("{not json")

    seen = _samples(SharedMetrics(here, tmp_path).exposition())

    assert (
        seen[
            (
                "agentloom_http_requests_total",
                (("method", "GET"), ("route", "/v1/models"), ("status", "200")),
            )
        ]
        == 1
    )
