"""Summaries and tables of a run's records."""

from __future__ import annotations

import pytest

from agentloom.evals.prices import ModelPrice, PriceTable
from agentloom.evals.records import PricedRecord, TaskRecord, TokenUsage
from agentloom.evals.report import price, score_table, summarise, summary_table


def record(strategy: str, task: str, kind: str = "qa", **given: object) -> TaskRecord:
    fields: dict[str, object] = {
        "strategy": strategy, "agent": "react", "model": "m", "task_id": task, "kind": kind,
        "status": "ok", "score": 1.0, "usage": TokenUsage(input_tokens=100, output_tokens=10),
        "latency_s": 1.0, "tool_calls": 1,
    }  # fmt: skip
    return TaskRecord.model_validate({**fields, **given})


def test_summaries_per_strategy_and_kind() -> None:
    records = price(
        [
            record("a", "q1"),
            record("a", "q2", status="timeout", score=0.0, latency_s=3.0, tool_calls=0),
            record("a", "r1", kind="retrieval", evidence_recall=0.5, latency_s=2.0),
            record("b", "q1", model="unpriced"),
        ],
        PriceTable(models={"m": ModelPrice(input=1.0, output=10.0)}),
    )

    a_all, a_qa, a_retrieval, b_all = summarise(records)

    assert (a_all.strategy, a_all.kind, a_all.tasks) == ("a", "all", 3)
    assert a_all.accuracy == 2 / 3
    assert (a_all.ok, a_all.errors, a_all.timeouts) == (2, 0, 1)
    assert a_all.total_tokens == 330
    assert a_all.cost == pytest.approx(3 * (100 * 1.0 + 10 * 10.0) / 1e6)
    assert (a_all.latency_mean_s, a_all.latency_p50_s, a_all.latency_max_s) == (2.0, 2.0, 3.0)
    assert (a_all.tool_calls, a_all.tool_calls_mean) == (2, 0.67)
    assert a_all.evidence_recall == 0.5
    assert (a_qa.kind, a_qa.tasks, a_qa.accuracy, a_qa.evidence_recall) == ("qa", 2, 0.5, None)
    assert (a_retrieval.kind, a_retrieval.tasks) == ("retrieval", 1)
    assert (b_all.strategy, b_all.cost) == ("b", None)  # its model has no price


def test_tables_line_up() -> None:
    records = [
        PricedRecord(**record("a", "q1").model_dump()),
        PricedRecord(**record("b", "q1", score=0.0, status="error").model_dump()),
    ]

    summary = summary_table(summarise(records)).splitlines()
    scores = score_table(records).splitlines()

    assert summary[0].startswith("strategy  kind  tasks  accuracy  failed  tokens  cost")
    assert set(summary[1]) == {"-", " "}
    assert summary[2].split()[:7] == ["a", "all", "1", "100.0%", "0", "110", "-"]
    assert summary[3].split()[:5] == ["b", "all", "1", "0.0%", "1"]
    assert scores[0].split() == ["task", "a", "b"]
    assert (
        scores[2]
        == "q1    1.00 · 110 tok · 1.00 s · 1 tool  0.00 error · 110 tok · 1.00 s · 1 tool"
    )
