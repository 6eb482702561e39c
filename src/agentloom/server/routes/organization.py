"""``/v1/organization/...``: projects, their service accounts and API keys (OpenAI's Admin API).

Only the admin key reaches these routes when keys are on (:mod:`agentloom.server.auth`).
"""

from __future__ import annotations

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response

from agentloom.api.admin import (
    AdminKey,
    AuditLogEntry,
    CreateAdminKeyRequest,
    CreatedAdminKey,
    CreatedServiceAccount,
    CreateKeyRequest,
    CreateProjectRequest,
    CreateServiceAccountRequest,
    Deleted,
    HostedToolPermissions,
    ModelPermissions,
    ModelPermissionsDeleted,
    NewKey,
    Project,
    ProjectKey,
    RateLimit,
    ServiceAccount,
    UpdateHostedToolPermissionsRequest,
    UpdateKeyRequest,
    UpdateModelPermissionsRequest,
    UpdateProjectRequest,
    UpdateRateLimitRequest,
    UsagePage,
)
from agentloom.api.lists import ListPage
from agentloom.errors import InvalidRequestError
from agentloom.server.body import parse_body
from agentloom.server.query import (
    limit_param,
    optional_param,
    order_param,
    unix_seconds_param,
)
from agentloom.server.render import json_response
from agentloom.server.routes.methods import Endpoint
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import (
    AFTER,
    BEFORE,
    LIMIT,
    ORDER_ASC,
    ApiRoute,
    Link,
    Op,
    Param,
    unix_seconds,
)
from agentloom.services.organization.projects import ProjectsService
from agentloom.services.organization.usage_reports import REPORTS, UsageRequest, usage_page
from agentloom.storage.audit import AuditQuery
from agentloom.storage.projects import ListQuery

PROJECT = "/v1/organization/projects/{project_id}"
# Where a project's rate limits are found: its id, then a limit's (OpenAPI links).
_MADE_PROJECT = {"project_id": "$response.body#/id"}
_LISTED_RATE_LIMIT = {
    "project_id": "$request.path.project_id",
    "rate_limit_id": "$response.body#/data/0/id",
}


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

    report.__name__ = report.__qualname__ = f"usage_{kind}"
    return report


def usage_request(params: QueryParams) -> UsageRequest:
    """The span, buckets, groups and filters of a usage (or costs) report."""
    return UsageRequest(
        start_time=unix_seconds_param(params, "start_time", required=True) or 0,
        end_time=unix_seconds_param(params, "end_time"),
        bucket_width=params.get("bucket_width", "1d"),
        group_by=repeated(params, "group_by"),
        project_ids=repeated(params, "project_ids"),
        api_key_ids=repeated(params, "api_key_ids"),
        models=repeated(params, "models"),
        limit=unix_seconds_param(params, "limit"),
        page=optional_param(params, "page"),
    )


async def usage(request: Request, kind: str) -> Response:
    store = runtime_of(request).database.usage
    page = await usage_page(store, kind, usage_request(request.query_params))
    return json_response(UsagePage.model_validate(page))


async def audit_logs(request: Request) -> Response:
    params = request.query_params
    query = AuditQuery(
        after=optional_param(params, "after"),
        before=optional_param(params, "before"),
        limit=limit_param(params),
        types=repeated(params, "event_types"),
        project_ids=repeated(params, "project_ids"),
        actor_ids=repeated(params, "actor_ids"),
        since=unix_seconds_param(params, "effective_at[gte]"),
        until=unix_seconds_param(params, "effective_at[lte]"),
    )
    return json_response(await _projects(request).audit.list(query))


def repeated(params: QueryParams, name: str) -> tuple[str, ...]:
    """A repeated parameter, as ``name=a&name=b`` or ``name[]=a&name[]=b``."""
    return tuple(params.getlist(name) + params.getlist(f"{name}[]"))


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


def ids_param(name: str, what: str) -> Param:
    return Param(name, {"type": "array", "items": {"type": "string"}}, f"Only these {what}.")


_PAGE = (AFTER, LIMIT)
USAGE_QUERY = (
    unix_seconds("start_time", "Start of the first bucket (unix seconds).", required=True),
    unix_seconds("end_time", "End of the report (unix seconds; default now)."),
    Param("bucket_width", {"type": "string", "enum": ["1m", "1h", "1d"], "default": "1d"}),
    Param("group_by", {"type": "array", "items": {"type": "string"}}, "Group results by these."),
    ids_param("project_ids", "projects"),
    ids_param("api_key_ids", "API keys"),
    ids_param("models", "models"),
    Param("limit", {"type": "integer", "minimum": 1, "maximum": 1440}, "Buckets a page holds."),
    Param("page", {"type": "string"}, "The next_page of the page before."),
)
_AUDIT = (
    AFTER,
    BEFORE,
    LIMIT,
    ids_param("event_types", "event types"),
    ids_param("project_ids", "projects"),
    ids_param("actor_ids", "actors"),
    unix_seconds("effective_at[gte]", "Entries at or after this time (unix seconds)."),
    unix_seconds("effective_at[lte]", "Entries at or before this time (unix seconds)."),
)
_ARCHIVED = Param("include_archived", {"type": "boolean", "default": False})

routes = [
    ApiRoute(
        "/v1/organization/projects",
        GET=Op(list_projects, returns=ListPage[Project], query=(*_PAGE, _ARCHIVED)),
        POST=Op(
            create_project,
            body=CreateProjectRequest,
            returns=Project,
            links={"rate_limits": Link("organization_list_rate_limits", _MADE_PROJECT)},
        ),
    ),
    ApiRoute(
        PROJECT,
        GET=Op(retrieve_project, returns=Project),
        POST=Op(update_project, body=UpdateProjectRequest, returns=Project),
    ),
    ApiRoute(PROJECT + "/archive", POST=Op(archive_project, returns=Project)),
    ApiRoute(
        PROJECT + "/service_accounts",
        GET=Op(list_accounts, returns=ListPage[ServiceAccount], query=_PAGE),
        POST=Op(create_account, body=CreateServiceAccountRequest, returns=CreatedServiceAccount),
    ),
    ApiRoute(
        PROJECT + "/service_accounts/{service_account_id}",
        GET=Op(retrieve_account, returns=ServiceAccount),
        DELETE=Op(delete_account, returns=Deleted),
    ),
    ApiRoute(
        PROJECT + "/service_accounts/{service_account_id}/api_keys",
        POST=Op(create_key, body=CreateKeyRequest, empty_body=True, returns=NewKey),
    ),
    ApiRoute(
        PROJECT + "/model_permissions",
        GET=Op(model_permissions, returns=ModelPermissions),
        POST=Op(model_permissions, body=UpdateModelPermissionsRequest, returns=ModelPermissions),
        DELETE=Op(model_permissions, returns=ModelPermissionsDeleted),
    ),
    ApiRoute(
        PROJECT + "/hosted_tool_permissions",
        GET=Op(tool_permissions, returns=HostedToolPermissions),
        POST=Op(
            tool_permissions,
            body=UpdateHostedToolPermissionsRequest,
            returns=HostedToolPermissions,
        ),
    ),
    ApiRoute(
        PROJECT + "/rate_limits",
        GET=Op(
            list_rate_limits,
            returns=ListPage[RateLimit],
            links={"update": Link("organization_update_rate_limit", _LISTED_RATE_LIMIT)},
        ),
    ),
    ApiRoute(
        PROJECT + "/rate_limits/{rate_limit_id}",
        POST=Op(update_rate_limit, body=UpdateRateLimitRequest, returns=RateLimit),
    ),
    *(
        ApiRoute(
            f"/v1/organization/usage/{kind}",
            GET=Op(_usage(kind), returns=UsagePage, query=USAGE_QUERY),
        )
        for kind in REPORTS
    ),
    ApiRoute(
        "/v1/organization/audit_logs",
        GET=Op(audit_logs, returns=ListPage[AuditLogEntry], query=_AUDIT),
    ),
    ApiRoute(
        "/v1/organization/admin_api_keys",
        GET=Op(list_admin_keys, returns=ListPage[AdminKey], query=(AFTER, LIMIT, ORDER_ASC)),
        POST=Op(create_admin_key, body=CreateAdminKeyRequest, returns=CreatedAdminKey),
    ),
    ApiRoute(
        "/v1/organization/admin_api_keys/{key_id}",
        GET=Op(retrieve_admin_key, returns=AdminKey),
        DELETE=Op(delete_admin_key, returns=Deleted),
    ),
    ApiRoute(PROJECT + "/api_keys", GET=Op(list_keys, returns=ListPage[ProjectKey], query=_PAGE)),
    ApiRoute(
        PROJECT + "/api_keys/{api_key_id}",
        GET=Op(retrieve_key, returns=ProjectKey),
        POST=Op(update_key, body=UpdateKeyRequest, empty_body=True, returns=ProjectKey),
        DELETE=Op(revoke_key, returns=Deleted),
    ),
]
