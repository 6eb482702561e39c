"""The ``openai`` package's types for users, invites, groups and roles, by the ``object`` each
answer carries and by the paths whose elements have none (for :mod:`tests.wire_audit`)."""

from __future__ import annotations

import re
from typing import Any

from openai.types.admin.organization import (
    Group,
    GroupDeleteResponse,
    Invite,
    InviteDeleteResponse,
    OrganizationUser,
    Role,
    RoleDeleteResponse,
    UserDeleteResponse,
)
from openai.types.admin.organization.groups import (
    RoleCreateResponse as GroupRoleCreateResponse,
)
from openai.types.admin.organization.groups import (
    UserCreateResponse as GroupUserCreateResponse,
)
from openai.types.admin.organization.groups import (
    UserDeleteResponse as GroupUserDeleteResponse,
)
from openai.types.admin.organization.groups import UserRetrieveResponse
from openai.types.admin.organization.projects import (
    GroupDeleteResponse as ProjectGroupDeleteResponse,
)
from openai.types.admin.organization.projects import ProjectGroup, ProjectUser
from openai.types.admin.organization.projects import (
    UserDeleteResponse as ProjectUserDeleteResponse,
)
from openai.types.admin.organization.users import RoleCreateResponse as UserRoleCreateResponse
from openai.types.admin.organization.users import RoleDeleteResponse as UnassignedResponse
from openai.types.admin.organization.users import RoleListResponse
from pydantic import TypeAdapter

PEOPLE_OBJECTS: dict[str, Any] = {
    "organization.user": OrganizationUser,
    "organization.user.deleted": UserDeleteResponse,
    "organization.invite": Invite,
    "organization.invite.deleted": InviteDeleteResponse,
    "group": Group,
    "group.deleted": GroupDeleteResponse,
    "group.user": GroupUserCreateResponse,
    "group.user.deleted": GroupUserDeleteResponse,
    "group.role": GroupRoleCreateResponse,
    "user.role": UserRoleCreateResponse,
    "user.role.deleted": UnassignedResponse,
    "group.role.deleted": UnassignedResponse,
    "role": Role,
    "role.deleted": RoleDeleteResponse,
    "organization.project.user": ProjectUser,
    "organization.project.user.deleted": ProjectUserDeleteResponse,
    "project.group": ProjectGroup,
    "project.group.deleted": ProjectGroupDeleteResponse,
}

PEOPLE_ELEMENTS: tuple[tuple[re.Pattern[str], TypeAdapter[Any]], ...] = (
    (re.compile(r"/(users|groups)/[^/]+/roles(/[^/]+)?$"), TypeAdapter(RoleListResponse)),
    (re.compile(r"/groups/[^/]+/users(/[^/]+)?$"), TypeAdapter(UserRetrieveResponse)),
)
