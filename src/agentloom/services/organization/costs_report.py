"""``/v1/organization/costs``: what the recorded usage cost, in OpenAI's buckets and shapes.

The costs were priced when the usage was recorded (:mod:`agentloom.services.organization.
prices`): a price changed later does not change the past. Buckets are a day wide (OpenAI's
only width), 7 a page by default, 180 at most. ``group_by`` takes OpenAI's ``project_id``,
``api_key_id`` and ``line_item`` (``"<model>, input_tokens"``, ``cached_input_tokens``,
``output_tokens``, ``embedding_tokens``: its ``quantity`` the tokens) and agentloom's
``model``; ``line_items`` and ``models`` filter.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from agentloom.frozen import frozen
from agentloom.services.organization.prices import NANOS_PER_DOLLAR
from agentloom.services.organization.usage_reports import (
    UsageRequest,
    check_groups,
    paged,
    span,
    width_and_limit,
)
from agentloom.storage.usage import SqlUsageStore, UsageCounts, UsageQuery, UsageTotal

__all__ = ["GROUPS", "CostsRequest", "costs_page"]

GROUPS = ("project_id", "api_key_id", "line_item", "model")
LIMITS = {"1d": (7, 180)}
OBJECT = "organization.costs.result"


@frozen
class CostsRequest:
    usage: UsageRequest  # the span, page, bucket width, groups and project, key, model filters
    line_items: tuple[str, ...] = ()


@dataclass(slots=True)
class _Sum:
    nanos: int = 0
    quantity: int = 0
    groups: dict[str, str] = field(default_factory=dict)


def _lines(model: str, c: UsageCounts) -> Iterator[tuple[str, int, int]]:
    """The line items of a model's counts: name, nano-dollars, tokens."""
    fresh = c.input_tokens - min(c.cached_tokens, c.input_tokens) + c.moderation_tokens
    yield f"{model}, input_tokens", c.cost_input, fresh
    yield f"{model}, cached_input_tokens", c.cost_cached, c.cached_tokens
    yield f"{model}, output_tokens", c.cost_output, c.output_tokens
    yield f"{model}, embedding_tokens", c.cost_embeddings, c.embedding_tokens


async def costs_page(store: SqlUsageStore, request: CostsRequest) -> dict[str, Any]:
    usage = request.usage
    width, limit = width_and_limit(usage, LIMITS)
    check_groups(usage.group_by, GROUPS)
    start, stop, end = span(usage, width, limit)
    by_line = "line_item" in usage.group_by or bool(request.line_items)
    stored = tuple(g for g in usage.group_by if g != "line_item")
    if by_line and "model" not in stored:
        stored += ("model",)
    query = UsageQuery(
        start=start,
        end=stop,
        width=width,
        group_by=stored,
        project_ids=usage.project_ids,
        key_ids=usage.api_key_ids,
        models=usage.models,
    )
    totals = await store.totals(query)
    buckets = [_bucket(at, at + width, totals, request) for at in range(start, stop, width)]
    return paged(buckets, stop, end)


def _bucket(
    start: int, end: int, totals: list[UsageTotal], request: CostsRequest
) -> dict[str, Any]:
    sums: dict[tuple[tuple[str, str], ...], _Sum] = {}
    for total in totals:
        if total.bucket == start:
            for groups, nanos, quantity in _shares(total, request):
                found = sums.setdefault(tuple(sorted(groups.items())), _Sum(groups=groups))
                found.nanos += nanos
                found.quantity += quantity
    results = [_result(s, request) for s in sums.values() if s.nanos or s.quantity]
    return {"object": "bucket", "start_time": start, "end_time": end, "results": results}


def _shares(total: UsageTotal, request: CostsRequest) -> Iterator[tuple[dict[str, str], int, int]]:
    """What a total adds to the bucket's results: by line item when asked, else all of it."""
    wanted = request.usage.group_by
    groups = {k: v for k, v in total.groups.items() if k in wanted and v is not None}
    counts = total.counts
    if "line_item" not in wanted and not request.line_items:
        yield groups, counts.cost, 0
        return
    for line, nanos, quantity in _lines(str(total.groups.get("model")), counts):
        if request.line_items and line not in request.line_items:
            continue
        shown = {**groups, "line_item": line} if "line_item" in wanted else groups
        yield shown, nanos, quantity


def _result(found: _Sum, request: CostsRequest) -> dict[str, Any]:
    result: dict[str, Any] = {
        "object": OBJECT,
        "amount": {"value": found.nanos / NANOS_PER_DOLLAR, "currency": "usd"},
        **found.groups,
    }
    if "line_item" in request.usage.group_by:
        result["quantity"] = found.quantity
        result["quantity_unit"] = "tokens"
    return result
