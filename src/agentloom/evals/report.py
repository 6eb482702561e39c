"""A run's results: priced, summed up per strategy (and per kind), as JSON and as tables.

The result file (JSON) holds the summaries and every task's record with its cost; ``agentloom
eval compare`` reads two of them. The tables: one row per strategy and kind (accuracy, errors,
tokens, cost, latency, tool calls), then each task's score under every strategy side by side.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from agentloom.errors import InvalidRequestError
from agentloom.evals.prices import PriceTable
from agentloom.evals.records import PricedRecord, TaskRecord

__all__ = [
    "EvalResult",
    "ResultFileError",
    "Summary",
    "load_result",
    "price",
    "render",
    "score_table",
    "summarise",
    "summary_table",
]


class ResultFileError(InvalidRequestError):
    """A result file that cannot be read."""


class Summary(BaseModel):
    """One strategy's results over one kind of task (``all``: every kind)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    strategy: str
    kind: str
    tasks: int
    accuracy: float  # the mean score, failed tasks counting 0
    ok: int
    errors: int
    timeouts: int
    input_tokens: int
    output_tokens: int
    total_tokens: int
    cost: float | None  # None when a model of these tasks has no price
    latency_mean_s: float
    latency_p50_s: float
    latency_max_s: float
    tool_calls: int
    tool_calls_mean: float
    evidence_recall: float | None  # retrieval: the mean share of evidence documents found


class EvalResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tasks: str
    tasks_digest: str
    run_file: str
    summaries: tuple[Summary, ...]
    results: tuple[PricedRecord, ...]


def price(records: Iterable[TaskRecord], prices: PriceTable) -> list[PricedRecord]:
    """The records with their cost from ``prices``."""
    return [
        PricedRecord(
            **record.model_dump(),
            cost=prices.cost(
                record.model,
                record.usage.input_tokens,
                record.usage.output_tokens,
                record.usage.cached_tokens,
            ),
        )
        for record in records
    ]


def summarise(records: Sequence[PricedRecord]) -> list[Summary]:
    """Per strategy (in order of appearance): all its tasks, then each kind it ran."""
    summaries = []
    for strategy in dict.fromkeys(record.strategy for record in records):
        mine = [record for record in records if record.strategy == strategy]
        summaries.append(_summary(strategy, "all", mine))
        kinds = list(dict.fromkeys(record.kind for record in mine))
        if len(kinds) > 1:
            summaries += [_summary(strategy, k, [r for r in mine if r.kind == k]) for k in kinds]
    return summaries


def _summary(strategy: str, kind: str, records: Sequence[PricedRecord]) -> Summary:
    latencies = [record.latency_s for record in records]
    costs = [record.cost for record in records]
    recalls = [r.evidence_recall for r in records if r.evidence_recall is not None]
    tool_calls = sum(record.tool_calls for record in records)
    return Summary(
        strategy=strategy,
        kind=kind,
        tasks=len(records),
        accuracy=statistics.fmean(record.score for record in records),
        ok=sum(record.status == "ok" for record in records),
        errors=sum(record.status == "error" for record in records),
        timeouts=sum(record.status == "timeout" for record in records),
        input_tokens=sum(record.usage.input_tokens for record in records),
        output_tokens=sum(record.usage.output_tokens for record in records),
        total_tokens=sum(record.usage.total_tokens for record in records),
        cost=None if None in costs else sum(cost or 0.0 for cost in costs),
        latency_mean_s=round(statistics.fmean(latencies), 3),
        latency_p50_s=round(statistics.median(latencies), 3),
        latency_max_s=max(latencies),
        tool_calls=tool_calls,
        tool_calls_mean=round(tool_calls / len(records), 2),
        evidence_recall=statistics.fmean(recalls) if recalls else None,
    )


def load_result(path: Path) -> EvalResult:
    try:
        return EvalResult.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise ResultFileError(f"cannot read the result file {path}: {exc.strerror}") from None
    except ValidationError as exc:
        error = exc.errors()[0]
        raise ResultFileError(f"{path} is not an eval result ({error['msg']})") from None


def render(result: EvalResult) -> str:
    """The result as indented JSON."""
    return json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


# --- tables ----------------------------------------------------------------------------------


def summary_table(summaries: Sequence[Summary]) -> str:
    header = ("strategy", "kind", "tasks", "accuracy", "failed", "tokens", "cost", "latency",
              "p50", "tool calls", "evidence")  # fmt: skip
    rows = [
        (
            s.strategy,
            s.kind,
            str(s.tasks),
            f"{s.accuracy:.1%}",
            str(s.errors + s.timeouts),
            f"{s.total_tokens:,}",
            _cost(s.cost),
            f"{s.latency_mean_s:.2f} s",
            f"{s.latency_p50_s:.2f} s",
            f"{s.tool_calls} ({s.tool_calls_mean:g}/task)",
            "-" if s.evidence_recall is None else f"{s.evidence_recall:.0%}",
        )
        for s in summaries
    ]
    return _table(header, rows)


def score_table(records: Sequence[PricedRecord]) -> str:
    """Each task's score, tokens, latency and tool calls under every strategy, side by side."""
    strategies = list(dict.fromkeys(record.strategy for record in records))
    cells = {(r.task_id, r.strategy): _cell(r) for r in records}
    tasks = list(dict.fromkeys(record.task_id for record in records))
    header = ("task", *strategies)
    rows = [(task, *(cells.get((task, s), "") for s in strategies)) for task in tasks]
    return _table(header, rows)


def _cell(record: PricedRecord) -> str:
    status = "" if record.status == "ok" else f" {record.status}"
    return (
        f"{record.score:.2f}{status} · {record.usage.total_tokens:,} tok · "
        f"{record.latency_s:.2f} s · {record.tool_calls} tool{_plural(record.tool_calls)}"
    )


def _plural(count: int) -> str:
    return "" if count == 1 else "s"


def _cost(cost: float | None) -> str:
    return "-" if cost is None else f"${cost:.4f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
             for row in (header, *rows)]  # fmt: skip
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines) + "\n"
