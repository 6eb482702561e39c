"""Users, invites, groups and roles, as OpenAI's Admin API shapes them
(``openai.types.admin.organization``: ``OrganizationUser``, ``Invite``, ``Group``, ``Role``,
``projects.ProjectUser``, ``projects.ProjectGroup`` and the role assignments)."""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

from pydantic import Field

from agentloom.api.admin import NAME_FIELD
from agentloom.api.integers import INT32_MAX
from agentloom.api.wire import Nullable, WireModel

T = TypeVar("T")

OrgRole = Literal["owner", "reader"]
ProjectRole = Literal["owner", "member"]
EMAIL_FIELD = Field(min_length=3, max_length=320, pattern=r"^[^@\s]+@[^@\s]+$")
PERMISSIONS_FIELD = Field(max_length=100)


class CursorPage(WireModel, Generic[T]):
    """A page whose ``next`` is the cursor of the one after (OpenAI's ``NextCursorPage``)."""

    object: Literal["list"] = "list"
    data: list[T]
    has_more: bool
    next: Nullable[str] = None

    @classmethod
    def model_parametrized_name(cls, params: tuple[Any, ...]) -> str:
        (item,) = params
        return f"{item.__name__}CursorPage"

    @classmethod
    def of(cls, data: list[T], ids: list[str], has_more: bool) -> CursorPage[T]:
        """A page of ``data``; ``ids``: each one's cursor (the last one's is ``next``)."""
        return cls(data=data, has_more=has_more, next=ids[-1] if has_more and ids else None)


class OrganizationUser(WireModel):
    id: str
    object: Literal["organization.user"] = "organization.user"
    email: str
    name: str
    role: OrgRole
    added_at: int
    is_service_account: bool = False


class UpdateUserRequest(WireModel):
    role: OrgRole | None = None
    role_id: str | None = None  # OpenAI's: role_org_owner or role_org_reader here
    developer_persona: str | None = None
    technical_level: str | None = None


class InviteProject(WireModel):
    id: str
    role: ProjectRole


class Invite(WireModel):
    id: str
    object: Literal["organization.invite"] = "organization.invite"
    email: str
    role: OrgRole
    status: Literal["accepted", "expired", "pending"]
    created_at: int
    expires_at: int
    accepted_at: int | None = None
    projects: list[InviteProject]


class CreateInviteRequest(WireModel):
    email: str = EMAIL_FIELD
    role: OrgRole
    # omitted: the default project, as at OpenAI; an empty list: no project
    projects: list[InviteProject] | None = Field(default=None, max_length=100)


class AcceptInviteRequest(WireModel):
    """agentloom's: an administrator accepts an invite for its person (until sign-in does)."""

    name: str | None = Field(default=None, min_length=1, max_length=256)


class Group(WireModel):
    id: str
    object: Literal["group"] = "group"
    name: str
    created_at: int
    group_type: Literal["group"] = "group"
    is_scim_managed: bool = False


class GroupRequest(WireModel):
    name: str = NAME_FIELD


class AddGroupUserRequest(WireModel):
    user_id: str


class GroupUserAdded(WireModel):
    object: Literal["group.user"] = "group.user"
    group_id: str
    user_id: str


class GroupUser(WireModel):
    """A user in a group (``OrganizationGroupUser``; retrieved, ``UserRetrieveResponse``)."""

    id: str
    email: str
    name: str
    user_type: Literal["user"] = "user"
    is_service_account: bool = False


class Removed(WireModel):
    """A membership or an assignment removed (``group.user.deleted``, ``user.role.deleted``,
    ``project.group.deleted`` ...)."""

    object: str
    deleted: bool = True


class Role(WireModel):
    id: str
    object: Literal["role"] = "role"
    name: str
    description: str | None = None
    permissions: list[str]
    predefined_role: bool
    resource_type: str


class CreateRoleRequest(WireModel):
    role_name: str = NAME_FIELD
    permissions: list[str] = PERMISSIONS_FIELD
    description: str | None = Field(default=None, max_length=1000)


class UpdateRoleRequest(WireModel):
    role_name: str | None = Field(default=None, min_length=1, max_length=256)
    permissions: list[str] | None = Field(default=None, max_length=100)
    description: str | None = Field(default=None, max_length=1000)


class AssignRoleRequest(WireModel):
    role_id: str


class AssignmentSource(WireModel):
    principal_id: str
    principal_type: str


class AssignedRole(WireModel):
    """A role as a user or group holds it (OpenAI's ``RoleListResponse``)."""

    id: str
    name: str
    description: str | None = None
    permissions: list[str]
    predefined_role: bool
    resource_type: str
    created_at: int
    updated_at: int
    assignment_sources: list[AssignmentSource]


class UserRole(WireModel):
    object: Literal["user.role"] = "user.role"
    role: Role
    user: OrganizationUser


class RoleGroup(WireModel):
    id: str
    object: Literal["group"] = "group"
    name: str
    created_at: int
    scim_managed: bool = False


class GroupRole(WireModel):
    object: Literal["group.role"] = "group.role"
    role: Role
    group: RoleGroup


class ProjectUser(WireModel):
    id: str
    object: Literal["organization.project.user"] = "organization.project.user"
    email: str
    name: str
    role: ProjectRole
    added_at: int


class AddProjectUserRequest(WireModel):
    role: ProjectRole
    user_id: str | None = None
    email: str | None = None


class UpdateProjectUserRequest(WireModel):
    role: ProjectRole


class ProjectGroup(WireModel):
    object: Literal["project.group"] = "project.group"
    project_id: str
    group_id: str
    group_name: str
    group_type: Literal["group"] = "group"
    created_at: int


class AddProjectGroupRequest(WireModel):
    group_id: str
    role: str  # a project role's id


class CreateUserKeyRequest(WireModel):
    """agentloom's: a key of a user's own in a project (OpenAI's users make theirs signed in)."""

    name: str = Field(default="Secret key", min_length=1, max_length=256)
    expires_in_seconds: int | None = Field(default=None, ge=60, le=INT32_MAX)
    scopes: list[str] | None = None
