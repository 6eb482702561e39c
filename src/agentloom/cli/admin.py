"""``agentloom projects`` and ``agentloom keys``: the operator's side of tenancy.

They work on the database directly (the one ``--config`` / ``AGENTLOOM_DATABASE_URL`` names),
so they need no running server and no admin key. A running server sees a revocation within its
watch interval (``[auth] watch_interval``).
"""

from __future__ import annotations

import asyncio
import re
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

if TYPE_CHECKING:
    from agentloom.api.admin import Project
    from agentloom.config import Settings
    from agentloom.services.organization.projects import ProjectsService

__all__ = ["keys", "projects"]

T = TypeVar("T")
_DURATION = re.compile(r"^(\d+)([smhd])$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}

config_option = click.option(
    "--config",
    "config_path",
    default=None,
    type=click.Path(dir_okay=False, path_type=Path),
    help="TOML configuration file (for the database URL).",
)


@click.group()
def projects() -> None:
    """Create, list and archive projects."""


@projects.command("create")
@click.argument("name")
@config_option
def create_project(name: str, config_path: Path | None) -> None:
    """Create a project; prints its id."""
    from agentloom.api.admin import CreateProjectRequest

    project = _run(config_path, lambda s: s.create_project(CreateProjectRequest(name=name)))
    click.echo(project.id)


@projects.command("list")
@click.option("--all", "include_archived", is_flag=True, help="Include archived projects.")
@config_option
def list_projects(include_archived: bool, config_path: Path | None) -> None:
    """List projects."""

    async def listing(service: ProjectsService) -> list[tuple[str, ...]]:
        rows: list[tuple[str, ...]] = []
        async for project in _every(service, include_archived):
            rows.append((project.id, project.status, project.name))
        return rows

    for row in _run(config_path, listing):
        click.echo("  ".join(row))


@projects.command("archive")
@click.argument("project_id")
@config_option
def archive_project(project_id: str, config_path: Path | None) -> None:
    """Archive a project: its keys stop working, its data stays."""
    _run(config_path, lambda s: s.archive_project(project_id))
    click.echo(f"archived {project_id}")


@click.group()
def keys() -> None:
    """Create, list and revoke project API keys."""


@keys.command("create")
@click.option("--project", "project", required=True, help="Project id or name.")
@click.option("--name", default="cli", show_default=True, help="The key's service account.")
@click.option("--expires-in", default=None, help="Lifetime, e.g. 3600s, 90m, 12h, 30d.")
@config_option
def create_key(project: str, name: str, expires_in: str | None, config_path: Path | None) -> None:
    """Create a key; prints it once (it cannot be shown again)."""
    from agentloom.api.admin import CreateServiceAccountRequest

    seconds = _duration(expires_in)

    async def create(service: ProjectsService) -> str:
        project_id = await _project_id(service, project)
        request = CreateServiceAccountRequest(name=name, expires_in_seconds=seconds)
        account = await service.create_account(project_id, request)
        assert account.api_key is not None
        return account.api_key.value

    click.echo(_run(config_path, create))


@keys.command("list")
@click.option("--project", "project", default=None, help="Project id or name (default: all).")
@config_option
def list_keys(project: str | None, config_path: Path | None) -> None:
    """List keys (redacted)."""
    from agentloom.storage.projects import ListQuery

    async def listing(service: ProjectsService) -> list[tuple[str, ...]]:
        wanted = None if project is None else await _project_id(service, project)
        rows: list[tuple[str, ...]] = []
        async for each in _every(service, include_archived=False):
            if wanted is not None and each.id != wanted:
                continue
            page = await service.list_keys(each.id, ListQuery(limit=100))
            while True:
                rows += [(k.id, each.id, k.redacted_value, k.name) for k in page.data]
                if not page.has_more:
                    break
                page = await service.list_keys(each.id, ListQuery(after=page.last_id, limit=100))
        return rows

    for row in _run(config_path, listing):
        click.echo("  ".join(row))


@keys.command("revoke")
@click.argument("key_id")
@config_option
def revoke_key(key_id: str, config_path: Path | None) -> None:
    """Revoke a key at once (every server process stops accepting it)."""
    from agentloom.errors import AgentloomError

    async def revoke(service: ProjectsService) -> None:
        async for each in _every(service, include_archived=True):
            try:
                await service.revoke_key(each.id, key_id)
            except AgentloomError:
                continue
            return
        raise click.ClickException(f"no API key {key_id}")

    _run(config_path, revoke)
    click.echo(f"revoked {key_id}")


# --- helpers -------------------------------------------------------------------------------


def _run(config_path: Path | None, work: Callable[[ProjectsService], Awaitable[T]]) -> T:
    from agentloom.config import ConfigError, load_settings
    from agentloom.errors import AgentloomError

    try:
        settings = load_settings(config_path)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc

    async def main() -> T:
        async with _service(settings) as service:
            return await work(service)

    try:
        return asyncio.run(main())
    except AgentloomError as exc:
        raise click.ClickException(exc.message) from exc


@asynccontextmanager
async def _service(settings: Settings) -> AsyncIterator[ProjectsService]:
    from agentloom.auth.keys import KeyHasher
    from agentloom.services.organization.audit import AuditLog
    from agentloom.services.organization.projects import ProjectsService
    from agentloom.storage.database import Database

    database = await Database.connect(
        settings.database.url, instance_id=f"cli_{secrets.token_hex(8)}"
    )
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


async def _every(service: ProjectsService, include_archived: bool) -> AsyncIterator[Project]:
    from agentloom.storage.projects import ListQuery

    page = await service.list_projects(ListQuery(limit=100), include_archived=include_archived)
    while True:
        for project in page.data:
            yield project
        if not page.has_more:
            return
        query = ListQuery(after=page.last_id, limit=100)
        page = await service.list_projects(query, include_archived=include_archived)


async def _project_id(service: ProjectsService, given: str) -> str:
    async for project in _every(service, include_archived=False):
        if given in (project.id, project.name):
            return project.id
    raise click.ClickException(f"no active project with id or name {given!r}")


def _duration(text: str | None) -> int | None:
    if text is None:
        return None
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        raise click.BadParameter(
            "use a number and a unit: 3600s, 90m, 12h or 30d", param_hint="--expires-in"
        )
    return int(match.group(1)) * _SECONDS[match.group(2)]
