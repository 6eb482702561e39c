"""``agentloom projects`` and ``agentloom keys``: the operator's side of tenancy.

By default they talk to the server's Admin API (``--base-url`` / ``AGENTLOOM_BASE_URL``) with
the admin key (``--admin-key`` / ``AGENTLOOM_ADMIN_KEY``; a server without keys needs none).
``--database URL`` works on that database directly instead, with no server and no admin key:
how the first key is made when the server runs in keys mode without an admin key. It never
creates a database: a SQLite file that is not there is an error naming it.

``--project`` takes a project's id, its name, or ``default`` (the default project).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

import click

from agentloom.cli.output import json_option, plain, print_json, table
from agentloom.cli.remote import Server, admin_options

__all__ = ["keys", "projects"]

_DURATION = re.compile(r"^(\d+)([smhd])$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
DEFAULT_PROJECT = "proj_default"
DEFAULT_ALIAS = "default"
Command = Callable[..., None]


class Admin(Protocol):
    """Where projects and keys are managed: the Admin API, or a database. Each method returns
    the API object (the ``openai`` package's, or agentloom's own wire model)."""

    def create_project(self, name: str) -> object: ...
    def list_projects(self, include_archived: bool) -> list[Any]: ...
    def archive_project(self, project_id: str) -> object: ...
    def create_key(self, project_id: str, name: str, expires_in: int | None) -> object: ...
    def list_keys(self, project_id: str) -> list[Any]: ...
    def revoke_key(self, project_id: str, key_id: str) -> object: ...


@contextmanager
def _admin(server: Server, database: str | None) -> Iterator[Admin]:
    if database is not None:
        from agentloom.cli.admin_database import DatabaseAdmin

        yield DatabaseAdmin(database)
        return
    from agentloom.cli.admin_api import ApiAdmin

    with server.talking() as client:
        yield ApiAdmin(client)


def admin_mode(command: Command) -> Command:
    """The server options, ``--database`` and ``--json``; the command gets ``admin``."""

    def with_admin(*args: Any, server: Server, database: str | None, **kwargs: Any) -> None:
        with _admin(server, database) as admin:
            command(*args, admin=admin, **kwargs)

    wrapped: Command = functools.update_wrapper(with_admin, command)
    database_option = click.option(
        "--database",
        default=None,
        metavar="URL",
        help="Work on this database (sqlite:///PATH, postgresql://...) instead of the server.",
    )
    return json_option(database_option(admin_options(wrapped)))


@click.group()
def projects() -> None:
    """Create, list and archive projects (the server's Admin API, or --database)."""


@projects.command("create")
@click.argument("name")
@admin_mode
def create_project(name: str, as_json: bool, admin: Admin) -> None:
    """Create a project; prints its id."""
    made = plain(admin.create_project(name))
    if as_json:
        print_json(made)
    else:
        click.echo(made["id"])


@projects.command("list")
@click.option("--all", "include_archived", is_flag=True, help="Include archived projects.")
@admin_mode
def list_projects(include_archived: bool, as_json: bool, admin: Admin) -> None:
    """List projects: id, status, name."""
    listed = plain(admin.list_projects(include_archived))
    if as_json:
        print_json(listed)
    else:
        table(("ID", "STATUS", "NAME"), ((p["id"], p.get("status"), p["name"]) for p in listed))


@projects.command("archive")
@click.argument("project")
@admin_mode
def archive_project(project: str, as_json: bool, admin: Admin) -> None:
    """Archive a project: its keys stop working, its data stays."""
    archived = plain(admin.archive_project(_project_id(admin, project)))
    if as_json:
        print_json(archived)
    else:
        click.echo(f"archived {archived['id']}")


@click.group()
def keys() -> None:
    """Create, list and revoke project API keys (the server's Admin API, or --database)."""


@keys.command("create")
@click.option("--project", required=True, help="Project id, name, or 'default'.")
@click.option("--name", default="cli", show_default=True, help="The key's service account.")
@click.option("--expires-in", default=None, help="Lifetime, e.g. 3600s, 90m, 12h, 30d.")
@admin_mode
def create_key(
    project: str, name: str, expires_in: str | None, as_json: bool, admin: Admin
) -> None:
    """Create a key; prints it once (it cannot be shown again)."""
    seconds = _duration(expires_in)
    account = plain(admin.create_key(_project_id(admin, project), name, seconds))
    if as_json:
        print_json(account)
    else:
        click.echo(account["api_key"]["value"])


@keys.command("list")
@click.option("--project", default=None, help="Project id, name, or 'default' (default: all).")
@admin_mode
def list_keys(project: str | None, as_json: bool, admin: Admin) -> None:
    """List keys (redacted): id, project, redacted value, name."""
    chosen = [_project_id(admin, project)] if project else _active_ids(admin)
    found = [
        (project_id, plain(key)) for project_id in chosen for key in admin.list_keys(project_id)
    ]
    if as_json:
        print_json([key for _, key in found])
    else:
        rows = ((k["id"], p, k["redacted_value"], k["name"]) for p, k in found)
        table(("ID", "PROJECT", "KEY", "NAME"), rows)


@keys.command("revoke")
@click.argument("key_id")
@click.option("--project", default=None, help="The key's project (default: found by its id).")
@admin_mode
def revoke_key(key_id: str, project: str | None, as_json: bool, admin: Admin) -> None:
    """Revoke a key at once (every server process stops accepting it)."""
    project_id = _project_id(admin, project) if project else _key_project(admin, key_id)
    revoked = plain(admin.revoke_key(project_id, key_id))
    if as_json:
        print_json(revoked)
    else:
        click.echo(f"revoked {key_id}")


# --- helpers -------------------------------------------------------------------------------


def _project_id(admin: Admin, given: str) -> str:
    """The active project ``given`` names: by id, by name, or ``default``."""
    wanted = DEFAULT_PROJECT if given == DEFAULT_ALIAS else given
    for project in plain(admin.list_projects(include_archived=False)):
        if wanted in (project["id"], project["name"]):
            return str(project["id"])
    raise click.ClickException(
        f"no active project with id or name {given!r} (agentloom projects list shows them)"
    )


def _active_ids(admin: Admin) -> list[str]:
    return [str(p["id"]) for p in plain(admin.list_projects(include_archived=False))]


def _key_project(admin: Admin, key_id: str) -> str:
    for project_id in _active_ids(admin):
        if any(key.id == key_id for key in admin.list_keys(project_id)):
            return project_id
    raise click.ClickException(f"no API key {key_id} in an active project")


def _duration(text: str | None) -> int | None:
    if text is None:
        return None
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        raise click.BadParameter(
            "use a number and a unit: 3600s, 90m, 12h or 30d", param_hint="--expires-in"
        )
    return int(match.group(1)) * _SECONDS[match.group(2)]
