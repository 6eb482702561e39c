"""Users, invites, groups and roles (OpenAI's Admin API): ``/v1/organization/users``,
``/invites``, ``/groups``, ``/roles``, a project's ``/users`` and ``/groups``, and a project's
roles under ``/v1/projects/{project_id}/...`` (OpenAI's paths for them).

Only the admin key reaches these routes when keys are on (:mod:`agentloom.server.auth`).
agentloom's own: ``POST /v1/organization/invites/{invite_id}/accept`` (until sign-in accepts
invites) and ``POST .../projects/{project_id}/users/{user_id}/api_keys`` (a user's own key).
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import Response

from agentloom.api import people as api
from agentloom.api.admin import Deleted, NewKey
from agentloom.api.lists import ListPage
from agentloom.server.body import parse_body
from agentloom.server.query import limit_param, optional_param, order_param
from agentloom.server.render import json_response
from agentloom.server.routes.methods import Endpoint
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import AFTER, LIMIT, ORDER_ASC, ApiRoute, Op, Param, limit
from agentloom.services.organization.wiring import Organization
from agentloom.storage.people import PrincipalType
from agentloom.storage.projects import ListQuery

ORG = "/v1/organization"
PROJECT = ORG + "/projects/{project_id}"
PROJECT_ROLES = "/v1/projects/{project_id}"  # OpenAI's path for a project's roles


def _org(request: Request) -> Organization:
    return runtime_of(request).organization


def _path(request: Request, name: str) -> str:
    value: str = request.path_params[name]
    return value


def _ids(request: Request, first: str, second: str) -> tuple[str, str]:
    return _path(request, first), _path(request, second)


def _query(request: Request, *, maximum: int = 100) -> ListQuery:
    params = request.query_params
    return ListQuery(
        after=optional_param(params, "after"),
        limit=limit_param(params, maximum=maximum),
        order=order_param(params, default="asc"),
    )


# --- users ---------------------------------------------------------------------------------


async def list_users(request: Request) -> Response:
    params = request.query_params
    emails = tuple(params.getlist("emails") + params.getlist("emails[]"))
    return json_response(await _org(request).people.list_users(_query(request), emails))


async def retrieve_user(request: Request) -> Response:
    return json_response(await _org(request).people.get_user(_path(request, "user_id")))


async def update_user(request: Request) -> Response:
    body = await parse_body(request, api.UpdateUserRequest)
    return json_response(await _org(request).people.update_user(_path(request, "user_id"), body))


async def delete_user(request: Request) -> Response:
    return json_response(await _org(request).people.delete_user(_path(request, "user_id")))


# --- invites -------------------------------------------------------------------------------


async def create_invite(request: Request) -> Response:
    body = await parse_body(request, api.CreateInviteRequest)
    return json_response(await _org(request).people.invite(body))


async def list_invites(request: Request) -> Response:
    return json_response(await _org(request).people.list_invites(_query(request)))


async def retrieve_invite(request: Request) -> Response:
    return json_response(await _org(request).people.get_invite(_path(request, "invite_id")))


async def delete_invite(request: Request) -> Response:
    return json_response(await _org(request).people.delete_invite(_path(request, "invite_id")))


async def accept_invite(request: Request) -> Response:
    body = await parse_body(request, api.AcceptInviteRequest, empty="{}")
    invite_id = _path(request, "invite_id")
    return json_response(await _org(request).people.accept_invite(invite_id, body))


# --- groups and their users ------------------------------------------------------------------


async def create_group(request: Request) -> Response:
    body = await parse_body(request, api.GroupRequest)
    return json_response(await _org(request).groups.create(body))


async def list_groups(request: Request) -> Response:
    return json_response(await _org(request).groups.list(_query(request, maximum=1000)))


async def retrieve_group(request: Request) -> Response:
    return json_response(await _org(request).groups.get(_path(request, "group_id")))


async def update_group(request: Request) -> Response:
    body = await parse_body(request, api.GroupRequest)
    return json_response(await _org(request).groups.rename(_path(request, "group_id"), body))


async def delete_group(request: Request) -> Response:
    return json_response(await _org(request).groups.delete(_path(request, "group_id")))


async def add_group_user(request: Request) -> Response:
    body = await parse_body(request, api.AddGroupUserRequest)
    return json_response(await _org(request).groups.add_user(_path(request, "group_id"), body))


async def list_group_users(request: Request) -> Response:
    group_id, query = _path(request, "group_id"), _query(request, maximum=1000)
    return json_response(await _org(request).groups.list_users(group_id, query))


async def retrieve_group_user(request: Request) -> Response:
    ids = _ids(request, "group_id", "user_id")
    return json_response(await _org(request).groups.get_user(*ids))


async def remove_group_user(request: Request) -> Response:
    ids = _ids(request, "group_id", "user_id")
    return json_response(await _org(request).groups.remove_user(*ids))


# --- roles (the organization's, or a project's) ----------------------------------------------


def _project_of(request: Request) -> str | None:
    found = request.path_params.get("project_id")
    return found if isinstance(found, str) else None


async def create_role(request: Request) -> Response:
    body = await parse_body(request, api.CreateRoleRequest)
    return json_response(await _org(request).roles.create(_project_of(request), body))


async def list_roles(request: Request) -> Response:
    query = _query(request, maximum=1000)
    return json_response(await _org(request).roles.list(_project_of(request), query))


async def retrieve_role(request: Request) -> Response:
    role_id = _path(request, "role_id")
    return json_response(await _org(request).roles.get(_project_of(request), role_id))


async def update_role(request: Request) -> Response:
    body = await parse_body(request, api.UpdateRoleRequest)
    role_id = _path(request, "role_id")
    return json_response(await _org(request).roles.update(_project_of(request), role_id, body))


async def delete_role(request: Request) -> Response:
    role_id = _path(request, "role_id")
    return json_response(await _org(request).roles.delete(_project_of(request), role_id))


# --- who holds a role: a user or a group, in the organization or a project -------------------


def _holder(kind: PrincipalType) -> Callable[[Request], tuple[PrincipalType, str, str | None]]:
    def holder(request: Request) -> tuple[PrincipalType, str, str | None]:
        return kind, _path(request, f"{kind}_id"), _project_of(request)

    return holder


def _as(name: str, handler: Endpoint) -> Endpoint:
    """``handler`` under another name (its operation's id), for a second path it serves."""

    async def endpoint(request: Request) -> Response:
        return await handler(request)

    endpoint.__name__ = endpoint.__qualname__ = name
    return endpoint


def _assignment_ops(
    kind: PrincipalType, where: str
) -> tuple[Endpoint, Endpoint, Endpoint, Endpoint]:
    """Assign, list, retrieve and unassign roles of a ``kind`` (its id in the path), in the
    organization or a project (``where``)."""
    held = _holder(kind)

    async def assign(request: Request) -> Response:
        body = await parse_body(request, api.AssignRoleRequest)
        return json_response(await _org(request).roles.assign(*held(request), body))

    async def listed(request: Request) -> Response:
        query = _query(request, maximum=1000)
        return json_response(await _org(request).roles.assignments(*held(request), query))

    async def retrieve(request: Request) -> Response:
        role_id = _path(request, "role_id")
        return json_response(await _org(request).roles.assigned(*held(request), role_id))

    async def unassign(request: Request) -> Response:
        role_id = _path(request, "role_id")
        return json_response(await _org(request).roles.unassign(*held(request), role_id))

    return (
        _as(f"assign_{where}_{kind}_role", assign),
        _as(f"list_{where}_{kind}_roles", listed),
        _as(f"retrieve_{where}_{kind}_role", retrieve),
        _as(f"unassign_{where}_{kind}_role", unassign),
    )


# --- a project's users, groups and users' keys -----------------------------------------------


async def add_project_user(request: Request) -> Response:
    body = await parse_body(request, api.AddProjectUserRequest)
    project_id = _path(request, "project_id")
    return json_response(await _org(request).people.add_project_user(project_id, body))


async def list_project_users(request: Request) -> Response:
    project_id = _path(request, "project_id")
    return json_response(await _org(request).people.list_project_users(project_id, _query(request)))


async def retrieve_project_user(request: Request) -> Response:
    ids = _ids(request, "project_id", "user_id")
    return json_response(await _org(request).people.get_project_user(*ids))


async def update_project_user(request: Request) -> Response:
    body = await parse_body(request, api.UpdateProjectUserRequest)
    ids = _ids(request, "project_id", "user_id")
    return json_response(await _org(request).people.update_project_user(*ids, body))


async def remove_project_user(request: Request) -> Response:
    ids = _ids(request, "project_id", "user_id")
    return json_response(await _org(request).people.remove_project_user(*ids))


async def create_user_key(request: Request) -> Response:
    body = await parse_body(request, api.CreateUserKeyRequest, empty="{}")
    ids = _ids(request, "project_id", "user_id")
    return json_response(await _org(request).people.create_user_key(*ids, body))


async def add_project_group(request: Request) -> Response:
    body = await parse_body(request, api.AddProjectGroupRequest)
    project_id = _path(request, "project_id")
    return json_response(await _org(request).groups.add_to_project(project_id, body))


async def list_project_groups(request: Request) -> Response:
    project_id, query = _path(request, "project_id"), _query(request)
    return json_response(await _org(request).groups.project_groups(project_id, query))


async def retrieve_project_group(request: Request) -> Response:
    ids = _ids(request, "project_id", "group_id")
    return json_response(await _org(request).groups.project_group(*ids))


async def remove_project_group(request: Request) -> Response:
    ids = _ids(request, "project_id", "group_id")
    return json_response(await _org(request).groups.remove_from_project(*ids))


_PAGE = (AFTER, LIMIT)
_CURSOR = (AFTER, limit(100, 1000), ORDER_ASC)
_EMAILS = Param("emails", {"type": "array", "items": {"type": "string"}}, "Only these users.")


def _assignment_routes(base: str, kind: PrincipalType, where: str) -> list[ApiRoute]:
    assign, listed, retrieve, unassign = _assignment_ops(kind, where)
    return [
        ApiRoute(
            base + "/roles",
            GET=Op(listed, returns=api.CursorPage[api.AssignedRole], query=_CURSOR),
            POST=Op(assign, body=api.AssignRoleRequest, returns=api.UserRole | api.GroupRole),
        ),
        ApiRoute(
            base + "/roles/{role_id}",
            GET=Op(retrieve, returns=api.AssignedRole),
            DELETE=Op(unassign, returns=api.Removed),
        ),
    ]


def _role_routes(base: str, where: str) -> list[ApiRoute]:
    return [
        ApiRoute(
            base + "/roles",
            GET=Op(
                _as(f"list_{where}_roles", list_roles),
                returns=api.CursorPage[api.Role],
                query=_CURSOR,
            ),
            POST=Op(
                _as(f"create_{where}_role", create_role),
                body=api.CreateRoleRequest,
                returns=api.Role,
            ),
        ),
        ApiRoute(
            base + "/roles/{role_id}",
            GET=Op(_as(f"retrieve_{where}_role", retrieve_role), returns=api.Role),
            POST=Op(
                _as(f"update_{where}_role", update_role),
                body=api.UpdateRoleRequest,
                returns=api.Role,
            ),
            DELETE=Op(_as(f"delete_{where}_role", delete_role), returns=Deleted),
        ),
    ]


routes = [
    ApiRoute(
        ORG + "/users",
        GET=Op(list_users, returns=ListPage[api.OrganizationUser], query=(*_PAGE, _EMAILS)),
    ),
    ApiRoute(
        ORG + "/users/{user_id}",
        GET=Op(retrieve_user, returns=api.OrganizationUser),
        POST=Op(update_user, body=api.UpdateUserRequest, returns=api.OrganizationUser),
        DELETE=Op(delete_user, returns=Deleted),
    ),
    *_assignment_routes(ORG + "/users/{user_id}", "user", "organization"),
    ApiRoute(
        ORG + "/invites",
        GET=Op(list_invites, returns=ListPage[api.Invite], query=_PAGE),
        POST=Op(create_invite, body=api.CreateInviteRequest, returns=api.Invite),
    ),
    ApiRoute(
        ORG + "/invites/{invite_id}",
        GET=Op(retrieve_invite, returns=api.Invite),
        DELETE=Op(delete_invite, returns=Deleted),
    ),
    ApiRoute(
        ORG + "/invites/{invite_id}/accept",
        POST=Op(
            accept_invite,
            body=api.AcceptInviteRequest,
            empty_body=True,
            returns=api.OrganizationUser,
        ),
    ),
    ApiRoute(
        ORG + "/groups",
        GET=Op(list_groups, returns=api.CursorPage[api.Group], query=_CURSOR),
        POST=Op(create_group, body=api.GroupRequest, returns=api.Group),
    ),
    ApiRoute(
        ORG + "/groups/{group_id}",
        GET=Op(retrieve_group, returns=api.Group),
        POST=Op(update_group, body=api.GroupRequest, returns=api.Group),
        DELETE=Op(delete_group, returns=Deleted),
    ),
    ApiRoute(
        ORG + "/groups/{group_id}/users",
        GET=Op(list_group_users, returns=api.CursorPage[api.GroupUser], query=_CURSOR),
        POST=Op(add_group_user, body=api.AddGroupUserRequest, returns=api.GroupUserAdded),
    ),
    ApiRoute(
        ORG + "/groups/{group_id}/users/{user_id}",
        GET=Op(retrieve_group_user, returns=api.GroupUser),
        DELETE=Op(remove_group_user, returns=api.Removed),
    ),
    *_assignment_routes(ORG + "/groups/{group_id}", "group", "organization"),
    *_role_routes(ORG, "organization"),
    ApiRoute(
        PROJECT + "/users",
        GET=Op(list_project_users, returns=ListPage[api.ProjectUser], query=_PAGE),
        POST=Op(add_project_user, body=api.AddProjectUserRequest, returns=api.ProjectUser),
    ),
    ApiRoute(
        PROJECT + "/users/{user_id}",
        GET=Op(retrieve_project_user, returns=api.ProjectUser),
        POST=Op(update_project_user, body=api.UpdateProjectUserRequest, returns=api.ProjectUser),
        DELETE=Op(remove_project_user, returns=Deleted),
    ),
    ApiRoute(
        PROJECT + "/users/{user_id}/api_keys",
        POST=Op(create_user_key, body=api.CreateUserKeyRequest, empty_body=True, returns=NewKey),
    ),
    ApiRoute(
        PROJECT + "/groups",
        GET=Op(list_project_groups, returns=api.CursorPage[api.ProjectGroup], query=_CURSOR),
        POST=Op(add_project_group, body=api.AddProjectGroupRequest, returns=api.ProjectGroup),
    ),
    ApiRoute(
        PROJECT + "/groups/{group_id}",
        GET=Op(retrieve_project_group, returns=api.ProjectGroup),
        DELETE=Op(remove_project_group, returns=api.Removed),
    ),
    *_role_routes(PROJECT_ROLES, "project"),
    *_assignment_routes(PROJECT_ROLES + "/users/{user_id}", "user", "project"),
    *_assignment_routes(PROJECT_ROLES + "/groups/{group_id}", "group", "project"),
]
