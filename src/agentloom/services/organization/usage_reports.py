"""``/v1/organization/usage/*``: recorded usage summed into time buckets, OpenAI's shapes.

Each endpoint is one :class:`Report`: which counts it shows and how a result reads. Buckets are
``1m``, ``1h`` or ``1d`` wide from ``start_time``; a page holds ``limit`` buckets (empty ones
included, as OpenAI sends them) and ``next_page`` names where the next page starts. Images,
audio and the Decisions API are not served here: their reports' buckets are always empty.
Vector stores report the bytes stored (:func:`vector_stores_page`), not counts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.storage.usage import SqlUsageStore, UsageCounts, UsageQuery, UsageTotal

WIDTHS = {"1m": 60, "1h": 3600, "1d": 86_400}
LIMITS = {"1m": (60, 1440), "1h": (24, 168), "1d": (7, 31)}  # default, most buckets a page


@frozen
class Report:
    object: str
    groups: tuple[str, ...]  # what it may be grouped by
    fields: Callable[[UsageCounts], dict[str, int]]
    keep: Callable[[UsageCounts], bool] = lambda counts: True


def _never(counts: UsageCounts) -> bool:
    """Usage of what this server does not serve: there is none."""
    return False


def _unserved(kind: str, groups: tuple[str, ...], fields: dict[str, int]) -> Report:
    return Report(f"organization.usage.{kind}.result", groups, lambda c: fields, _never)


_BY_MODEL = ("project_id", "api_key_id", "model")
REPORTS: dict[str, Report] = {
    "completions": Report(
        "organization.usage.completions.result",
        ("project_id", "api_key_id", "model"),
        lambda c: {
            "input_tokens": c.input_tokens,
            "input_cached_tokens": c.cached_tokens,
            "output_tokens": c.output_tokens,
            "num_model_requests": c.requests,
        },
        lambda c: c.requests > 0,
    ),
    "embeddings": Report(
        "organization.usage.embeddings.result",
        ("project_id", "api_key_id", "model"),
        lambda c: {"input_tokens": c.embedding_tokens, "num_model_requests": c.embedding_requests},
        lambda c: c.embedding_requests > 0,
    ),
    "file_search_calls": Report(
        "organization.usage.file_searches.result",
        ("project_id", "api_key_id"),
        lambda c: {"num_requests": c.file_search_calls},
        lambda c: c.file_search_calls > 0,
    ),
    "web_search_calls": Report(
        "organization.usage.web_searches.result",
        ("project_id", "api_key_id", "model"),
        lambda c: {"num_requests": c.web_search_calls, "num_model_requests": c.requests},
        lambda c: c.web_search_calls > 0,
    ),
    "code_interpreter_sessions": Report(
        "organization.usage.code_interpreter_sessions.result",
        ("project_id",),
        lambda c: {"num_sessions": c.code_interpreter_sessions},
        lambda c: c.code_interpreter_sessions > 0,
    ),
    "moderations": Report(
        "organization.usage.moderations.result",
        _BY_MODEL,
        lambda c: {
            "input_tokens": c.moderation_tokens,
            "num_model_requests": c.moderation_requests,
        },
        lambda c: c.moderation_requests > 0,
    ),
    "images": _unserved("images", _BY_MODEL, {"images": 0, "num_model_requests": 0}),
    "audio_speeches": _unserved(
        "audio_speeches", _BY_MODEL, {"characters": 0, "num_model_requests": 0}
    ),
    "audio_transcriptions": _unserved(
        "audio_transcriptions", _BY_MODEL, {"seconds": 0, "num_model_requests": 0}
    ),
    "decisions": _unserved(
        "decisions",
        _BY_MODEL,
        {"input_tokens": 0, "output_tokens": 0, "num_model_requests": 0},
    ),
}


@frozen
class UsageRequest:
    start_time: int
    end_time: int | None = None
    bucket_width: str = "1d"
    group_by: tuple[str, ...] = ()
    project_ids: tuple[str, ...] = ()
    api_key_ids: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    limit: int | None = None
    page: str | None = None


async def usage_page(store: SqlUsageStore, kind: str, request: UsageRequest) -> dict[str, Any]:
    """One page of the ``kind`` report (a key of :data:`REPORTS`)."""
    report = REPORTS[kind]
    width, limit = width_and_limit(request)
    check_groups(request.group_by, report.groups)
    start, stop, end = span(request, width, limit)
    query = UsageQuery(
        start=start,
        end=stop,
        width=width,
        group_by=request.group_by,
        project_ids=request.project_ids,
        key_ids=request.api_key_ids,
        models=request.models,
    )
    totals = [] if report.keep is _never else await store.totals(query)
    buckets = [_bucket(at, at + width, report, totals) for at in range(start, stop, width)]
    return paged(buckets, stop, end)


async def vector_stores_page(store: SqlUsageStore, request: UsageRequest) -> dict[str, Any]:
    """The bytes the vector stores hold in each bucket: those of the files added before its
    end (and not deleted since: the past is not kept, a deleted file counts nowhere)."""
    width, limit = width_and_limit(request)
    check_groups(request.group_by, ("project_id",))
    start, stop, end = span(request, width, limit)
    grouped = "project_id" in request.group_by
    added = await store.stored_bytes(start, stop, width, request.project_ids)
    buckets = []
    held: dict[str, int] = {}
    for at in range(start, stop, width):
        for project, size in added.get(at, {}).items():
            held[project] = held.get(project, 0) + size
        buckets.append(_stored(at, at + width, held, grouped))
    return paged(buckets, stop, end)


def _stored(start: int, end: int, held: dict[str, int], grouped: bool) -> dict[str, Any]:
    kind = "organization.usage.vector_stores.result"
    if grouped:
        results = [
            {"object": kind, "usage_bytes": size, "project_id": project}
            for project, size in sorted(held.items())
        ]
    else:
        results = [{"object": kind, "usage_bytes": sum(held.values())}] if held else []
    return {"object": "bucket", "start_time": start, "end_time": end, "results": results}


def check_groups(group_by: tuple[str, ...], allowed: tuple[str, ...]) -> None:
    for name in group_by:
        if name not in allowed:
            raise InvalidRequestError(
                f"Invalid 'group_by': '{name}' (this report groups by {', '.join(allowed)}).",
                param="group_by",
            )


def span(request: UsageRequest, width: int, limit: int) -> tuple[int, int, int]:
    """Where the page starts, where it stops, where the report ends."""
    start = _page_start(request)
    end = request.end_time if request.end_time is not None else int(time.time()) + 1
    return start, min(end, start + width * limit), end


def paged(buckets: list[dict[str, Any]], stop: int, end: int) -> dict[str, Any]:
    page: dict[str, Any] = {"object": "page", "data": buckets, "has_more": stop < end}
    if stop < end:
        page["next_page"] = str(stop)
    return page


def width_and_limit(
    request: UsageRequest, limits: dict[str, tuple[int, int]] = LIMITS
) -> tuple[int, int]:
    width = WIDTHS.get(request.bucket_width)
    if width is None or request.bucket_width not in limits:
        raise InvalidRequestError(
            f"Invalid 'bucket_width': expected {', '.join(limits)}.", param="bucket_width"
        )
    default, most = limits[request.bucket_width]
    limit = default if request.limit is None else request.limit
    if not 1 <= limit <= most:
        raise InvalidRequestError(
            f"Invalid 'limit': between 1 and {most} for bucket_width={request.bucket_width}.",
            param="limit",
        )
    return width, limit


def _page_start(request: UsageRequest) -> int:
    if request.page is None:
        return request.start_time
    page = request.page
    if not (page.isascii() and page.isdigit() and len(page) <= 12):
        raise InvalidRequestError("Invalid 'page': use a next_page value.", param="page")
    if int(page) < request.start_time:
        raise InvalidRequestError("Invalid 'page': use a next_page value.", param="page")
    return int(page)


def _bucket(start: int, end: int, report: Report, totals: list[UsageTotal]) -> dict[str, Any]:
    results = [
        {"object": report.object, **report.fields(t.counts), **_grouped(t)}
        for t in totals
        if t.bucket == start and report.keep(t.counts)
    ]
    return {"object": "bucket", "start_time": start, "end_time": end, "results": results}


def _grouped(total: UsageTotal) -> dict[str, str]:
    return {name: value for name, value in total.groups.items() if value is not None}
