"""``agentloom projects`` / ``keys`` through a server's Admin API (``/v1/organization/...``,
OpenAI's contract, with the admin key): the default, so the CLI never guesses a database."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import openai
    from openai.resources.admin.organization.projects import Projects
    from openai.types.admin.organization import Project
    from openai.types.admin.organization.projects import (
        APIKeyDeleteResponse,
        ProjectAPIKey,
        ServiceAccountCreateResponse,
    )

__all__ = ["ApiAdmin"]


class ApiAdmin:
    """Projects and keys through ``client`` (an ``openai.OpenAI`` holding the admin key)."""

    def __init__(self, client: openai.OpenAI) -> None:
        self.client = client

    @property
    def projects(self) -> Projects:
        return self.client.admin.organization.projects

    def create_project(self, name: str) -> Project:
        return self.projects.create(name=name)

    def list_projects(self, include_archived: bool) -> list[Project]:
        return list(self.projects.list(include_archived=include_archived))

    def archive_project(self, project_id: str) -> Project:
        return self.projects.archive(project_id)

    def create_key(
        self, project_id: str, name: str, expires_in: int | None
    ) -> ServiceAccountCreateResponse:
        accounts = self.projects.service_accounts
        if expires_in is None:
            return accounts.create(project_id, name=name)
        return accounts.create(project_id, name=name, expires_in_seconds=expires_in)

    def list_keys(self, project_id: str) -> list[ProjectAPIKey]:
        return list(self.projects.api_keys.list(project_id))

    def revoke_key(self, project_id: str, key_id: str) -> APIKeyDeleteResponse:
        return self.projects.api_keys.delete(key_id, project_id=project_id)
