"""The organization's ledger (admin key only): spend limits and alerts (OpenAI's
``spend_limit`` / ``spend_alerts``, the organization's and each project's), costs
(``/v1/organization/costs``) and the vector stores' usage. The request log's routes are
:mod:`agentloom.server.routes.request_log`'s."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from agentloom.api.admin import UsagePage
from agentloom.api.lists import ListPage
from agentloom.api.spend import (
    CostsPage,
    CreateSpendAlertRequest,
    SpendAlert,
    SpendAlertDeleted,
    SpendLimit,
    SpendLimitDeleted,
    UpdateSpendLimitRequest,
)
from agentloom.server.body import parse_body
from agentloom.server.query import limit_param, optional_param, order_param
from agentloom.server.render import json_response
from agentloom.server.routes.methods import Endpoint
from agentloom.server.routes.organization import (
    USAGE_QUERY,
    ids_param,
    repeated,
    usage_request,
)
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import (
    AFTER,
    BEFORE,
    LIMIT,
    ORDER_ASC,
    ApiRoute,
    Op,
    Param,
)
from agentloom.services.organization.costs_report import CostsRequest, costs_page
from agentloom.services.organization.spend_admin import SpendAdmin
from agentloom.services.organization.usage_reports import vector_stores_page

ORG = "/v1/organization"
PROJECT = ORG + "/projects/{project_id}"


def _spend(request: Request) -> SpendAdmin:
    return runtime_of(request).spend


async def _scope(request: Request) -> str:
    return await _spend(request).scope(request.path_params.get("project_id"))


# --- spend limits ----------------------------------------------------------------------------


async def spend_limit(request: Request) -> Response:
    spend, scope = _spend(request), await _scope(request)
    if request.method == "POST":
        body = await parse_body(request, UpdateSpendLimitRequest)
        return json_response(await spend.set_limit(scope, body))
    if request.method == "DELETE":
        return json_response(await spend.delete_limit(scope))
    return json_response(await spend.limit(scope))


# --- spend alerts ----------------------------------------------------------------------------


async def spend_alerts(request: Request) -> Response:
    spend, scope = _spend(request), await _scope(request)
    if request.method == "POST":
        body = await parse_body(request, CreateSpendAlertRequest)
        return json_response(await spend.create_alert(scope, body))
    params = request.query_params
    page = await spend.alerts(
        scope,
        optional_param(params, "after"),
        optional_param(params, "before"),
        limit_param(params),
        order_param(params, default="asc"),
    )
    return json_response(page)


async def spend_alert(request: Request) -> Response:
    spend, scope = _spend(request), await _scope(request)
    alert_id: str = request.path_params["alert_id"]
    if request.method == "POST":
        body = await parse_body(request, CreateSpendAlertRequest)
        return json_response(await spend.update_alert(scope, alert_id, body))
    if request.method == "DELETE":
        return json_response(await spend.delete_alert(scope, alert_id))
    return json_response(await spend.alert(scope, alert_id))


# --- costs and the vector stores' usage ------------------------------------------------------


async def costs(request: Request) -> Response:
    params = request.query_params
    asked = CostsRequest(usage_request(params), line_items=repeated(params, "line_items"))
    page = await costs_page(runtime_of(request).database.usage, asked)
    return json_response(CostsPage.model_validate(page))


async def vector_stores_usage(request: Request) -> Response:
    store = runtime_of(request).database.usage
    page = await vector_stores_page(store, usage_request(request.query_params))
    return json_response(UsagePage.model_validate(page))


_ALERT_PAGE = (AFTER, BEFORE, LIMIT, ORDER_ASC)
_COSTS = (
    *USAGE_QUERY[:2],
    Param("bucket_width", {"type": "string", "enum": ["1d"], "default": "1d"}),
    Param(
        "group_by",
        {"type": "array", "items": {"type": "string"}},
        "project_id, api_key_id, line_item, model (agentloom's).",
    ),
    ids_param("project_ids", "projects"),
    ids_param("api_key_ids", "API keys"),
    ids_param("models", "models (agentloom's)"),
    ids_param("line_items", "line items ('<model>, input_tokens' ...)"),
    Param("limit", {"type": "integer", "minimum": 1, "maximum": 180}, "Buckets a page holds."),
    Param("page", {"type": "string"}, "The next_page of the page before."),
)


def _named(handler: Endpoint, kind: str) -> Endpoint:
    """``handler`` under a name of its own for ``kind`` (the OpenAPI operation ids differ)."""

    async def scoped(request: Request) -> Response:
        return await handler(request)

    scoped.__name__ = scoped.__qualname__ = f"{kind}_{handler.__name__}"
    return scoped


def _spend_routes(base: str, kind: str) -> list[ApiRoute]:
    """The spend limit and alerts of the organization (``base``: ORG) or of a project."""
    limit, alerts, alert = (_named(h, kind) for h in (spend_limit, spend_alerts, spend_alert))
    return [
        ApiRoute(
            base + "/spend_limit",
            GET=Op(limit, returns=SpendLimit, summary=f"The {kind}'s hard spend limit"),
            POST=Op(limit, body=UpdateSpendLimitRequest, returns=SpendLimit),
            DELETE=Op(limit, returns=SpendLimitDeleted),
        ),
        ApiRoute(
            base + "/spend_alerts",
            GET=Op(alerts, returns=ListPage[SpendAlert], query=_ALERT_PAGE),
            POST=Op(alerts, body=CreateSpendAlertRequest, returns=SpendAlert),
        ),
        ApiRoute(
            base + "/spend_alerts/{alert_id}",
            GET=Op(alert, returns=SpendAlert),
            POST=Op(alert, body=CreateSpendAlertRequest, returns=SpendAlert),
            DELETE=Op(alert, returns=SpendAlertDeleted),
        ),
    ]


routes = [
    *_spend_routes(ORG, "organization"),
    *_spend_routes(PROJECT, "project"),
    ApiRoute(ORG + "/costs", GET=Op(costs, returns=CostsPage, query=_COSTS)),
    ApiRoute(
        ORG + "/usage/vector_stores",
        GET=Op(vector_stores_usage, returns=UsagePage, query=USAGE_QUERY),
    ),
]
