"""``agentloom projects`` / ``keys`` with ``--database URL``: the work done on a database
directly, with no server and no admin key (how the first key is made for a server started in
keys mode without an admin key).

It works only on a database that exists: a SQLite file that is not there is an error naming
the path, never a new empty database. A running server sees a revocation within its watch
interval (``[auth] watch_interval``).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

if TYPE_CHECKING:
    from agentloom.api.admin import CreatedServiceAccount, Deleted, Project, ProjectKey
    from agentloom.services.organization.projects import ProjectsService

__all__ = ["DatabaseAdmin", "missing_sqlite_file"]

T = TypeVar("T")
PAGE = 100


def missing_sqlite_file(url: str) -> Path | None:
    """The file a ``sqlite:///`` URL names when it does not exist (``None`` for any other)."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    path = Path(parsed.database).resolve()
    return None if path.is_file() else path


class DatabaseAdmin:
    """Projects and keys on the database at ``url`` (each call its own connection)."""

    def __init__(self, url: str) -> None:
        missing = missing_sqlite_file(url)
        if missing is not None:
            raise click.ClickException(
                f"no database at {missing}: --database names a database that exists (the "
                "server's [database] url); none is created here"
            )
        self.url = url

    def create_project(self, name: str) -> Project:
        from agentloom.api.admin import CreateProjectRequest

        return self._run(lambda s: s.create_project(CreateProjectRequest(name=name)))

    def list_projects(self, include_archived: bool) -> list[Project]:
        return self._run(lambda s: _projects(s, include_archived))

    def archive_project(self, project_id: str) -> Project:
        return self._run(lambda s: s.archive_project(project_id))

    def create_key(
        self, project_id: str, name: str, expires_in: int | None
    ) -> CreatedServiceAccount:
        from agentloom.api.admin import CreateServiceAccountRequest

        request = CreateServiceAccountRequest(name=name, expires_in_seconds=expires_in)
        return self._run(lambda s: s.create_account(project_id, request))

    def list_keys(self, project_id: str) -> list[ProjectKey]:
        return self._run(lambda s: _keys(s, project_id))

    def revoke_key(self, project_id: str, key_id: str) -> Deleted:
        return self._run(lambda s: s.revoke_key(project_id, key_id))

    def _run(self, work: Callable[[ProjectsService], Awaitable[T]]) -> T:
        from sqlalchemy.exc import DBAPIError

        from agentloom.errors import AgentloomError
        from agentloom.redact import redact_url

        async def main() -> T:
            async with _service(self.url) as service:
                return await work(service)

        try:
            return asyncio.run(main())
        except AgentloomError as exc:
            raise click.ClickException(exc.message) from exc
        except (DBAPIError, OSError) as exc:  # not there, not reachable, not ours to open
            cause = str(getattr(exc, "orig", None) or exc).splitlines()[0]
            raise click.ClickException(
                f"cannot use the database {redact_url(self.url)}: {cause}"
            ) from exc


@asynccontextmanager
async def _service(url: str) -> AsyncIterator[ProjectsService]:
    from agentloom.auth.keys import KeyHasher
    from agentloom.services.organization.audit import AuditLog
    from agentloom.services.organization.projects import ProjectsService
    from agentloom.storage.database import Database

    database = await Database.connect(url, instance_id=f"cli_{secrets.token_hex(8)}")
    try:
        await database.migrate()
        await database.projects.ensure_default(time.time())
        hasher = KeyHasher(await database.projects.secret())
        yield ProjectsService(
            database.projects,
            hasher,
            changed=lambda: None,
            limits=database.rate_limits,
            audit=AuditLog(database.audit, actor="cli"),
            models=list,
            people=database.people,  # a user's keys are listed with their user
            roles=database.roles,
        )
    finally:
        await database.aclose()


async def _projects(service: ProjectsService, include_archived: bool) -> list[Project]:
    from agentloom.storage.projects import ListQuery

    found: list[Project] = []
    query = ListQuery(limit=PAGE)
    while True:
        page = await service.list_projects(query, include_archived=include_archived)
        found += page.data
        if not page.has_more:
            return found
        query = ListQuery(after=page.last_id, limit=PAGE)


async def _keys(service: ProjectsService, project_id: str) -> list[ProjectKey]:
    from agentloom.storage.projects import ListQuery

    found: list[ProjectKey] = []
    query = ListQuery(limit=PAGE)
    while True:
        page = await service.list_keys(project_id, query)
        found += page.data
        if not page.has_more:
            return found
        query = ListQuery(after=page.last_id, limit=PAGE)
