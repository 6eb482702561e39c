"""``/v1/organization/...``: projects, their service accounts and API keys (OpenAI's Admin API).

Only the admin key reaches these routes when keys are on (:mod:`agentloom.server.auth`).
"""

from __future__ import annotations

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agentloom.api.admin import (
    CreateAdminKeyRequest,
    CreateKeyRequest,
    CreateProjectRequest,
    CreateServiceAccountRequest,
    UpdateHostedToolPermissionsRequest,
    UpdateKeyRequest,
    UpdateModelPermissionsRequest,
    UpdateProjectRequest,
    UpdateRateLimitRequest,
)
from agentloom.errors import InvalidRequestError
from agentloom.server.body import parse_body
from agentloom.server.query import limit_param, optional_param, order_param
from agentloom.server.render import json_response
from agentloom.server.routes.methods import Endpoint, by_method
from agentloom.server.runtime import runtime_of
from agentloom.services.projects import ProjectsService
from agentloom.services.usage_reports import REPORTS, UsageRequest, usage_page
from agentloom.storage.audit import AuditQuery
from agentloom.storage.projects import ListQuery

PROJECT = "/v1/organization/projects/{project_id}"


def _projects(request: Request) -> ProjectsService:
    return runtime_of(request).projects


def _path(request: Request, name: str) -> str:
    value: str = request.path_params[name]
    return value


def _query(request: Request) -> ListQuery:
    params = request.query_params
    return ListQuery(after=optional_param(params, "after"), limit=limit_param(params))


def _flag(request: Request, name: str) -> bool:
    raw = request.query_params.get(name, "false").lower()
    if raw not in ("true", "false"):
        raise InvalidRequestError(
            f"Invalid '{name}': expected true or false, got '{raw}'.",
            param=name,
            code="invalid_value",
        )
    return raw == "true"


# --- projects ------------------------------------------------------------------------------


async def create_project(request: Request) -> Response:
    body = await parse_body(request, CreateProjectRequest)
    return json_response(await _projects(request).create_project(body))


async def list_projects(request: Request) -> Response:
    archived = _flag(request, "include_archived")
    page = await _projects(request).list_projects(_query(request), include_archived=archived)
    return json_response(page)


async def retrieve_project(request: Request) -> Response:
    return json_response(await _projects(request).get_project(_path(request, "project_id")))


async def update_project(request: Request) -> Response:
    body = await parse_body(request, UpdateProjectRequest)
    project_id = _path(request, "project_id")
    return json_response(await _projects(request).update_project(project_id, body))


async def archive_project(request: Request) -> Response:
    return json_response(await _projects(request).archive_project(_path(request, "project_id")))


# --- service accounts ----------------------------------------------------------------------


async def create_account(request: Request) -> Response:
    body = await parse_body(request, CreateServiceAccountRequest)
    project_id = _path(request, "project_id")
    return json_response(await _projects(request).create_account(project_id, body))


async def list_accounts(request: Request) -> Response:
    project_id = _path(request, "project_id")
    return json_response(await _projects(request).list_accounts(project_id, _query(request)))


async def retrieve_account(request: Request) -> Response:
    ids = _path(request, "project_id"), _path(request, "service_account_id")
    return json_response(await _projects(request).get_account(*ids))


async def delete_account(request: Request) -> Response:
    ids = _path(request, "project_id"), _path(request, "service_account_id")
    return json_response(await _projects(request).delete_account(*ids))


async def create_key(request: Request) -> Response:
    body = await parse_body(request, CreateKeyRequest, empty="{}")
    ids = _path(request, "project_id"), _path(request, "service_account_id")
    return json_response(await _projects(request).create_key(*ids, body))


# --- permissions ---------------------------------------------------------------------------


async def model_permissions(request: Request) -> Response:
    service, project_id = _projects(request), _path(request, "project_id")
    if request.method == "POST":
        body = await parse_body(request, UpdateModelPermissionsRequest)
        return json_response(await service.set_model_permissions(project_id, body))
    if request.method == "DELETE":
        return json_response(await service.clear_model_permissions(project_id))
    return json_response(await service.model_permissions(project_id))


async def tool_permissions(request: Request) -> Response:
    service, project_id = _projects(request), _path(request, "project_id")
    if request.method == "POST":
        body = await parse_body(request, UpdateHostedToolPermissionsRequest)
        return json_response(await service.set_tool_permissions(project_id, body))
    return json_response(await service.tool_permissions(project_id))


# --- rate limits, usage, audit logs ---------------------------------------------------------


async def list_rate_limits(request: Request) -> Response:
    return json_response(await _projects(request).rate_limits(_path(request, "project_id")))


async def update_rate_limit(request: Request) -> Response:
    body = await parse_body(request, UpdateRateLimitRequest)
    ids = _path(request, "project_id"), _path(request, "rate_limit_id")
    return json_response(await _projects(request).update_rate_limit(*ids, body))


def _usage(kind: str) -> Endpoint:
    async def report(request: Request) -> Response:
        return await usage(request, kind)

    return report


async def usage(request: Request, kind: str) -> Response:
    params = request.query_params
    usage_request = UsageRequest(
        start_time=_int(params, "start_time", required=True) or 0,
        end_time=_int(params, "end_time"),
        bucket_width=params.get("bucket_width", "1d"),
        group_by=_list(params, "group_by"),
        project_ids=_list(params, "project_ids"),
        api_key_ids=_list(params, "api_key_ids"),
        models=_list(params, "models"),
        limit=_int(params, "limit"),
        page=optional_param(params, "page"),
    )
    store = runtime_of(request).database.usage
    page = await usage_page(store, kind, usage_request)
    return JSONResponse(page)


async def audit_logs(request: Request) -> Response:
    params = request.query_params
    query = AuditQuery(
        after=optional_param(params, "after"),
        before=optional_param(params, "before"),
        limit=limit_param(params),
        types=_list(params, "event_types"),
        project_ids=_list(params, "project_ids"),
        actor_ids=_list(params, "actor_ids"),
        since=_int(params, "effective_at[gte]"),
        until=_int(params, "effective_at[lte]"),
    )
    return json_response(await _projects(request).audit.list(query))


def _list(params: QueryParams, name: str) -> tuple[str, ...]:
    """A repeated parameter, as ``name=a&name=b`` or ``name[]=a&name[]=b``."""
    return tuple(params.getlist(name) + params.getlist(f"{name}[]"))


def _int(params: QueryParams, name: str, *, required: bool = False) -> int | None:
    raw = params.get(name)
    if raw is None:
        if required:
            raise InvalidRequestError(
                f"Missing required parameter: '{name}'.",
                param=name,
                code="missing_required_parameter",
            )
        return None
    if not raw.isdigit():
        raise InvalidRequestError(
            f"Invalid '{name}': expected unix seconds, got '{raw}'.",
            param=name,
            code="invalid_value",
        )
    return int(raw)


# --- admin keys ----------------------------------------------------------------------------


async def create_admin_key(request: Request) -> Response:
    body = await parse_body(request, CreateAdminKeyRequest)
    return json_response(await runtime_of(request).admin_keys.create(body))


async def list_admin_keys(request: Request) -> Response:
    params = request.query_params
    keys = runtime_of(request).admin_keys
    page = await keys.list(
        optional_param(params, "after"), limit_param(params), order_param(params, default="asc")
    )
    return json_response(page)


async def retrieve_admin_key(request: Request) -> Response:
    return json_response(await runtime_of(request).admin_keys.get(_path(request, "key_id")))


async def delete_admin_key(request: Request) -> Response:
    return json_response(await runtime_of(request).admin_keys.delete(_path(request, "key_id")))


# --- keys ----------------------------------------------------------------------------------


async def list_keys(request: Request) -> Response:
    project_id = _path(request, "project_id")
    return json_response(await _projects(request).list_keys(project_id, _query(request)))


async def retrieve_key(request: Request) -> Response:
    ids = _path(request, "project_id"), _path(request, "api_key_id")
    return json_response(await _projects(request).get_key(*ids))


async def update_key(request: Request) -> Response:
    body = await parse_body(request, UpdateKeyRequest, empty="{}")
    ids = _path(request, "project_id"), _path(request, "api_key_id")
    return json_response(await _projects(request).update_key(*ids, body))


async def revoke_key(request: Request) -> Response:
    ids = _path(request, "project_id"), _path(request, "api_key_id")
    return json_response(await _projects(request).revoke_key(*ids))


routes = [
    Route(
        "/v1/organization/projects",
        by_method(GET=list_projects, POST=create_project),
        methods=["GET", "POST"],
    ),
    Route(
        PROJECT,
        by_method(GET=retrieve_project, POST=update_project),
        methods=["GET", "POST"],
    ),
    Route(PROJECT + "/archive", archive_project, methods=["POST"]),
    Route(
        PROJECT + "/service_accounts",
        by_method(GET=list_accounts, POST=create_account),
        methods=["GET", "POST"],
    ),
    Route(
        PROJECT + "/service_accounts/{service_account_id}",
        by_method(GET=retrieve_account, DELETE=delete_account),
        methods=["GET", "DELETE"],
    ),
    Route(
        PROJECT + "/service_accounts/{service_account_id}/api_keys",
        create_key,
        methods=["POST"],
    ),
    Route(
        PROJECT + "/model_permissions",
        model_permissions,
        methods=["GET", "HEAD", "POST", "DELETE"],
    ),
    Route(
        PROJECT + "/hosted_tool_permissions",
        tool_permissions,
        methods=["GET", "HEAD", "POST"],
    ),
    Route(PROJECT + "/rate_limits", list_rate_limits, methods=["GET"]),
    Route(PROJECT + "/rate_limits/{rate_limit_id}", update_rate_limit, methods=["POST"]),
    *(Route(f"/v1/organization/usage/{kind}", _usage(kind), methods=["GET"]) for kind in REPORTS),
    Route("/v1/organization/audit_logs", audit_logs, methods=["GET"]),
    Route(
        "/v1/organization/admin_api_keys",
        by_method(GET=list_admin_keys, POST=create_admin_key),
        methods=["GET", "POST"],
    ),
    Route(
        "/v1/organization/admin_api_keys/{key_id}",
        by_method(GET=retrieve_admin_key, DELETE=delete_admin_key),
        methods=["GET", "DELETE"],
    ),
    Route(PROJECT + "/api_keys", list_keys, methods=["GET"]),
    Route(
        PROJECT + "/api_keys/{api_key_id}",
        by_method(GET=retrieve_key, POST=update_key, DELETE=revoke_key),
        methods=["GET", "POST", "DELETE"],
    ),
]
