"""agentloom's request log over HTTP: one row a request of the traffic, a request's own row, and
the log summed up over time (``.../requests/summary``).

The organization's (``/v1/organization/requests...``, the admin key's) read every project's
rows, filtered by ``project_ids`` among the rest; a project's (``/v1/requests...``, any key of
the project, or the admin key naming it) read that project's rows only.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Final

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response

from agentloom.api.lists import ListPage
from agentloom.api.request_summary import (
    RequestStatsObject,
    RequestSummary,
    RequestSummaryBucket,
    RequestSummaryGroup,
)
from agentloom.api.spend import LoggedRequestObject
from agentloom.errors import InvalidRequestError, NotFoundError
from agentloom.server.query import limit_param, optional_param, order_param, unix_seconds_param
from agentloom.server.render import json_response
from agentloom.server.routes.organization import ids_param, repeated
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import AFTER, LIMIT, ORDER, ApiRoute, Op, Param, unix_seconds
from agentloom.services.organization.prices import NANOS_PER_DOLLAR
from agentloom.storage.request_log import LoggedRequest, RequestLogQuery
from agentloom.storage.request_summary import RequestStats, RequestSummaryQuery, Summary
from agentloom.tenancy import current_project

__all__ = ["routes"]

ORG = "/v1/organization/requests"
OWN = "/v1/requests"
WIDTHS: Final = {"1m": 60, "1h": 3600, "1d": 86400}
MOST_BUCKETS: Final = 1440
Projects = tuple[str, ...] | None  # None: every project's rows (the organization's routes)


def _log_query(params: QueryParams, projects: Projects) -> RequestLogQuery:
    return RequestLogQuery(
        after=optional_param(params, "after"),
        limit=limit_param(params),
        order=order_param(params),
        project_ids=repeated(params, "project_ids") if projects is None else projects,
        key_ids=repeated(params, "api_key_ids"),
        models=repeated(params, "models"),
        endpoints=repeated(params, "endpoints"),
        statuses=_statuses(repeated(params, "status")),
        batch_ids=repeated(params, "batch_ids"),
        errors_only=params.get("errors") == "true",
        ok_only=params.get("errors") == "false",
        since=unix_seconds_param(params, "created_after"),
        until=unix_seconds_param(params, "created_before"),
    )


def _statuses(raw: tuple[str, ...]) -> tuple[int, ...]:
    if not all(value.isascii() and value.isdigit() and len(value) == 3 for value in raw):
        raise InvalidRequestError(
            "Invalid 'status': HTTP status codes (e.g. 200, 429).", param="status"
        )
    return tuple(int(value) for value in raw)


def _logged(row: LoggedRequest) -> LoggedRequestObject:
    return LoggedRequestObject(
        id=row.id,
        created_at=row.created_at,
        project_id=row.project_id,
        api_key_id=row.key_id,
        user=row.user,
        endpoint=row.endpoint,
        model=row.model,
        deployment=row.deployment,
        input_tokens=row.input_tokens,
        input_cached_tokens=row.cached_tokens,
        output_tokens=row.output_tokens,
        cost=row.cost / NANOS_PER_DOLLAR,
        latency_ms=row.latency_ms,
        time_to_first_token_ms=row.first_token_ms,
        status=row.status,
        error_code=row.error_code,
        response_id=row.response_id,
        batch_id=row.batch_id,
    )


# --- a page of rows, and one row ------------------------------------------------------------


async def _list(request: Request, projects: Projects) -> Response:
    query = _log_query(request.query_params, projects)
    page = await runtime_of(request).database.request_log.list(query)
    if page is None:
        raise NotFoundError(f"No logged request found with id '{query.after}'.", param="after")
    rows = [_logged(row) for row in page.data]
    return json_response(ListPage.of(rows, has_more=page.has_more))


async def _retrieve(request: Request, projects: Projects) -> Response:
    request_id: str = request.path_params["request_id"]
    row = await runtime_of(request).database.request_log.get(request_id)
    if row is None or (projects is not None and row.project_id not in projects):
        raise NotFoundError(
            f"No logged request found with id '{request_id}' (the log keeps a request once its"
            " answer has been sent, written within about a second).",
            param="request_id",
        )
    return json_response(_logged(row))


# --- the summary ----------------------------------------------------------------------------


def _width(params: QueryParams) -> tuple[str, int]:
    name = params.get("bucket_width", "1h")
    if name not in WIDTHS:
        raise InvalidRequestError(
            f"Invalid 'bucket_width': expected one of 1m, 1h, 1d, got '{name[:100]}'.",
            param="bucket_width",
            code="invalid_value",
        )
    return name, WIDTHS[name]


def _span(params: QueryParams, width: int) -> tuple[int, int]:
    """The span in whole buckets (UTC): the start down to a bucket's, the end up to one's."""
    start = unix_seconds_param(params, "start_time", required=True) or 0
    end = unix_seconds_param(params, "end_time") or int(time.time()) + 1
    if end <= start:
        raise InvalidRequestError(
            "Invalid 'end_time': it must be after 'start_time'.", param="end_time"
        )
    start, end = start - start % width, end + (-end % width)
    if (end - start) // width > MOST_BUCKETS:
        raise InvalidRequestError(
            f"Invalid 'start_time': the span holds more than {MOST_BUCKETS} buckets of this"
            " 'bucket_width' (a wider bucket, or a shorter span).",
            param="start_time",
        )
    return start, end


def _stats_object(stats: RequestStats) -> dict[str, float | int | None]:
    return {
        "requests": stats.requests,
        "errors": stats.errors,
        "input_tokens": stats.input_tokens,
        "input_cached_tokens": stats.cached_tokens,
        "output_tokens": stats.output_tokens,
        "cost": stats.cost / NANOS_PER_DOLLAR,
        "latency_ms_mean": stats.latency_ms_mean,
        "latency_ms_p50": stats.latency_ms_quantile(0.5),
        "latency_ms_p95": stats.latency_ms_quantile(0.95),
        "latency_ms_max": stats.latency_ms_max,
    }


_NONE = RequestStats(0, 0, 0, 0, 0, 0, None, None)


def _summary(name: str, start: int, end: int, width: int, found: Summary) -> RequestSummary:
    buckets = [
        RequestSummaryBucket(
            start_time=start + i * width,
            end_time=start + (i + 1) * width,
            **_stats_object(found.buckets.get(i, _NONE)),
        )
        for i in range((end - start) // width)
    ]
    groups = [
        RequestSummaryGroup(
            project_id=g.project_id, model=g.model, endpoint=g.endpoint, **_stats_object(g.stats)
        )
        for g in found.groups
    ]
    totals = RequestStatsObject(**_stats_object(found.totals))
    return RequestSummary(
        bucket_width=name,
        start_time=start,
        end_time=end,
        buckets=buckets,
        totals=totals,
        groups=groups,
    )


async def _summarize(request: Request, projects: Projects) -> Response:
    params = request.query_params
    name, width = _width(params)
    start, end = _span(params, width)
    filters = replace(_log_query(params, projects), after=None, since=start, until=end)
    asked = RequestSummaryQuery(filters, start=start, width=width)
    found = await runtime_of(request).database.request_summaries.summarize(asked)
    return json_response(_summary(name, start, end, width, found))


# --- the routes -----------------------------------------------------------------------------


def _own() -> tuple[str, ...]:
    return (current_project(),)


async def list_requests(request: Request) -> Response:
    return await _list(request, None)


async def retrieve_request(request: Request) -> Response:
    return await _retrieve(request, None)


async def summarize_requests(request: Request) -> Response:
    return await _summarize(request, None)


async def list_project_requests(request: Request) -> Response:
    return await _list(request, _own())


async def retrieve_project_request(request: Request) -> Response:
    return await _retrieve(request, _own())


async def summarize_project_requests(request: Request) -> Response:
    return await _summarize(request, _own())


_FILTERS = (
    ids_param("api_key_ids", "API keys"),
    ids_param("models", "models"),
    ids_param("endpoints", "endpoints (responses, chat.completions, embeddings ...)"),
    ids_param("batch_ids", "batches (their requests)"),
    Param(
        "status",
        {"type": "array", "items": {"type": "integer", "minimum": 100, "maximum": 599}},
        "Only these HTTP statuses.",
    ),
    Param(
        "errors",
        {"type": "boolean"},
        "true: only failed requests (status 400 and up, or an error code); false: only the rest.",
    ),
)
_PROJECTS = (ids_param("project_ids", "projects"),)
_PAGE = (
    AFTER,
    LIMIT,
    ORDER,
    *_FILTERS,
    unix_seconds("created_after", "Created at or after (unix seconds)."),
    unix_seconds("created_before", "Created before (unix seconds)."),
)
_SUMMARY = (
    unix_seconds("start_time", "Start of the first bucket (unix seconds).", required=True),
    unix_seconds("end_time", "End of the span (unix seconds; default now)."),
    Param("bucket_width", {"type": "string", "enum": list(WIDTHS), "default": "1h"}),
    *_FILTERS,
)
_SUMMED = "The request log summed up over time (agentloom's)"

routes = [
    ApiRoute(
        ORG,
        GET=Op(list_requests, returns=ListPage[LoggedRequestObject], query=_PAGE + _PROJECTS),
    ),
    ApiRoute(
        ORG + "/summary",
        GET=Op(
            summarize_requests,
            returns=RequestSummary,
            query=_SUMMARY + _PROJECTS,
            summary=_SUMMED,
        ),
    ),
    ApiRoute(ORG + "/{request_id}", GET=Op(retrieve_request, returns=LoggedRequestObject)),
    ApiRoute(
        OWN,
        GET=Op(
            list_project_requests,
            returns=ListPage[LoggedRequestObject],
            query=_PAGE,
            summary="The project's requests (agentloom's)",
        ),
    ),
    ApiRoute(
        OWN + "/summary",
        GET=Op(
            summarize_project_requests,
            returns=RequestSummary,
            query=_SUMMARY,
            summary=_SUMMED + ", the project's",
        ),
    ),
    ApiRoute(
        OWN + "/{request_id}",
        GET=Op(retrieve_project_request, returns=LoggedRequestObject),
    ),
]
