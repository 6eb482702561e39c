"""``/v1/organization/...``: projects, their service accounts and API keys (OpenAI's Admin API).

Only the admin key reaches these routes when keys are on (:mod:`agentloom.server.auth`).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentloom.api.admin import (
    CreateKeyRequest,
    CreateProjectRequest,
    CreateServiceAccountRequest,
    UpdateHostedToolPermissionsRequest,
    UpdateModelPermissionsRequest,
    UpdateProjectRequest,
)
from agentloom.errors import InvalidRequestError
from agentloom.server.body import parse_body
from agentloom.server.query import limit_param, optional_param
from agentloom.server.render import json_response
from agentloom.server.routes.methods import by_method
from agentloom.server.runtime import runtime_of
from agentloom.services.projects import ProjectsService
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


# --- keys ----------------------------------------------------------------------------------


async def list_keys(request: Request) -> Response:
    project_id = _path(request, "project_id")
    return json_response(await _projects(request).list_keys(project_id, _query(request)))


async def retrieve_key(request: Request) -> Response:
    ids = _path(request, "project_id"), _path(request, "api_key_id")
    return json_response(await _projects(request).get_key(*ids))


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
    Route(PROJECT + "/api_keys", list_keys, methods=["GET"]),
    Route(
        PROJECT + "/api_keys/{api_key_id}",
        by_method(GET=retrieve_key, DELETE=revoke_key),
        methods=["GET", "DELETE"],
    ),
]
