"""The organization's objects, as OpenAI's Admin API shapes them (``openai.types.admin``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from agentloom.api.integers import INT32_MAX, Int32, Int64
from agentloom.api.wire import Nullable, WireModel

Role = Literal["owner", "member", "none"]
NAME_FIELD = Field(min_length=1, max_length=256)
MAX_RETENTION = 100 * 365 * 86_400.0  # seconds: a century


class Project(WireModel):
    id: str
    object: Literal["organization.project"] = "organization.project"
    name: str
    created_at: int
    archived_at: int | None = None
    status: Literal["active", "archived"] = "active"
    response_timeout: float | None = None  # agentloom's: the project's own budget, when set
    response_retention: float | None = None  # agentloom's: its responses' own age, when set
    # agentloom's: who may see and change its stored objects (agentloom.access_rules)
    access_rules: list[dict[str, Any]] | None = None


class CreateProjectRequest(WireModel):
    name: str = NAME_FIELD
    external_key_id: str | None = None
    geography: str | None = None
    access_rules: list[Any] | None = None  # agentloom's: the project's access rules


class UpdateProjectRequest(WireModel):
    name: str | None = NAME_FIELD
    external_key_id: str | None = None
    geography: str | None = None
    # agentloom's: seconds this project's responses may run, in place of [limits]
    # response_timeout; null: the server's again
    response_timeout: float | None = Field(default=None, gt=0, le=86_400)
    # agentloom's: seconds this project's stored responses are kept (0: forever), in place of
    # [retention] responses; null: the server's again
    response_retention: float | None = Field(default=None, ge=0, le=MAX_RETENTION)
    # agentloom's: the project's access rules, in place of its rules; null or []: none
    access_rules: list[Any] | None = None


class ServiceAccount(WireModel):
    id: str
    object: Literal["organization.project.service_account"] = "organization.project.service_account"
    name: str
    role: Role
    created_at: int


class CreateServiceAccountRequest(WireModel):
    name: str = NAME_FIELD
    create_service_account_only: bool | None = None
    expires_in_seconds: int | None = Field(default=None, ge=60, le=INT32_MAX)


class NewKey(WireModel):
    """A key as made: the only time its value is shown (a user's: agentloom's own object)."""

    id: str
    object: Literal[
        "organization.project.service_account.api_key", "organization.project.user.api_key"
    ] = "organization.project.service_account.api_key"
    name: str
    value: str
    created_at: int
    expires_at: int | None = None


class CreatedServiceAccount(ServiceAccount):
    role: Literal["member", "none"]
    api_key: NewKey | None = None


class CreateKeyRequest(WireModel):
    name: str = Field(default="Secret key", min_length=1, max_length=256)
    expires_in_seconds: int | None = Field(default=None, ge=60, le=INT32_MAX)
    scopes: list[str] | None = None


class UpdateKeyRequest(WireModel):
    expires_in_seconds: int | None = Field(default=None, ge=60, le=INT32_MAX)
    scopes: list[str] | None = None


class KeyOwnerAccount(WireModel):
    id: str
    name: str
    role: str
    created_at: int


class KeyOwnerUser(WireModel):
    id: str
    email: str
    name: str
    role: str  # in the project: owner or member
    created_at: int


class KeyOwner(WireModel):
    type: Literal["service_account", "user"] = "service_account"
    service_account: KeyOwnerAccount | None = None
    user: KeyOwnerUser | None = None


class ProjectKey(WireModel):
    id: str
    object: Literal["organization.project.api_key"] = "organization.project.api_key"
    name: str
    redacted_value: str
    created_at: int
    last_used_at: Nullable[int] = None
    expires_at: int | None = None
    owner: KeyOwner
    owner_project_access: Literal["active", "inactive"] = "active"
    scopes: list[str] | None = None  # agentloom's: a restricted key's; null: every permission


class Deleted(WireModel):
    id: str
    object: str
    deleted: bool = True


class ModelPermissions(WireModel):
    object: Literal["project.model_permissions"] = "project.model_permissions"
    mode: Literal["allow_list", "deny_list"]
    model_ids: list[str]


class UpdateModelPermissionsRequest(WireModel):
    mode: Literal["allow_list", "deny_list"]
    model_ids: list[str] = Field(max_length=1000)


class ModelPermissionsDeleted(WireModel):
    object: Literal["project.model_permissions.deleted"] = "project.model_permissions.deleted"
    deleted: bool = True


class ToolPermission(WireModel):
    enabled: bool


class HostedToolPermissions(WireModel):
    code_interpreter: ToolPermission
    file_search: ToolPermission
    image_generation: ToolPermission
    mcp: ToolPermission
    web_search: ToolPermission


class UpdateHostedToolPermissionsRequest(WireModel):
    code_interpreter: ToolPermission | None = None
    file_search: ToolPermission | None = None
    image_generation: ToolPermission | None = None
    mcp: ToolPermission | None = None
    web_search: ToolPermission | None = None


class AuditLogEntry(WireModel):
    """An audit log entry; the object named by ``type`` rides along as an extra field."""

    model_config = ConfigDict(extra="allow")

    id: str
    object: Literal["organization.audit_log"] = "organization.audit_log"
    type: str
    effective_at: int
    actor: dict[str, Any]
    project: dict[str, str] | None = None


class RateLimit(WireModel):
    id: str
    object: Literal["project.rate_limit"] = "project.rate_limit"
    model: str
    max_requests_per_1_minute: int
    max_tokens_per_1_minute: int
    max_requests_per_1_day: int


class UpdateRateLimitRequest(WireModel):
    max_requests_per_1_minute: Int32 | None = Field(default=None, ge=0)
    max_tokens_per_1_minute: Int32 | None = Field(default=None, ge=0)
    max_requests_per_1_day: Int32 | None = Field(default=None, ge=0)
    batch_1_day_max_input_tokens: Int64 | None = None
    max_audio_megabytes_per_1_minute: Int64 | None = None
    max_images_per_1_minute: Int64 | None = None


class AdminKeyOwner(WireModel):
    type: Literal["user"] = "user"
    object: Literal["organization.user"] = "organization.user"
    role: Literal["owner"] = "owner"
    id: str = "admin"
    name: str = "admin"


class AdminKey(WireModel):
    id: str
    object: Literal["organization.admin_api_key"] = "organization.admin_api_key"
    name: str
    redacted_value: str
    created_at: int
    expires_at: Nullable[int] = None  # null: it does not expire
    last_used_at: int | None = None
    owner: AdminKeyOwner = Field(default_factory=AdminKeyOwner)


class CreatedAdminKey(AdminKey):
    value: str


class CreateAdminKeyRequest(WireModel):
    name: str = NAME_FIELD
    expires_in_seconds: int | None = Field(default=None, ge=60, le=INT32_MAX)


class UsageBucket(WireModel):
    """One time bucket of a usage report; each result is the report's counts (and the names of
    what it is grouped by) with its ``object``."""

    object: Literal["bucket"] = "bucket"
    start_time: int
    end_time: int
    results: list[dict[str, int | str]]


class UsagePage(WireModel):
    """A page of ``/v1/organization/usage/*``: ``next_page`` names where the next one starts."""

    object: Literal["page"] = "page"
    data: list[UsageBucket]
    has_more: bool
    next_page: str | None = None
