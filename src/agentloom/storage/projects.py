"""Projects, their service accounts and API keys (SQLAlchemy Core, SQLite and PostgreSQL).

These are the organization's records, read and written by the admin API and the key verifier,
so they are not scoped to the running work's project: every function names its project.

A key is stored as its keyed hash (``digest``) and a redacted form, never in clear. Every
change that can invalidate a key some server process has cached (a revoked key, a deleted
service account, an archived project) bumps ``auth_state.epoch`` in the same transaction;
processes watch the epoch and drop their caches when it moves.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import asdict
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.frozen import frozen
from agentloom.storage import schema
from agentloom.storage.base import Order, Page
from agentloom.storage.notify import notify
from agentloom.storage.pages import keyset_page
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import across_projects
from agentloom.storage.upsert import insert as upsert
from agentloom.tenancy import DEFAULT_PROJECT

PR = schema.projects
SA = schema.service_accounts
K = schema.api_keys
AS = schema.auth_state
AUTH_CHANNEL = "agentloom_auth"  # notified when the epoch moves (PostgreSQL)


@frozen
class ProjectRow:
    id: str
    name: str
    created_at: float
    archived_at: float | None = None
    model_policy: str | None = None  # JSON {"mode", "model_ids"}; None: every model
    tool_policy: str | None = None  # JSON list of the hosted tools it may not use
    response_timeout: float | None = None  # seconds a response may run; None: the server's
    response_retention: float | None = None  # seconds its responses are kept; None: the server's
    access_rules: str | None = None  # JSON list (agentloom.access_rules); None: no rules


@frozen
class ServiceAccountRow:
    id: str
    project_id: str
    name: str
    role: str
    created_at: float


@frozen
class KeyRow:
    id: str
    project_id: str
    service_account_id: str | None  # its owner: a service account, or
    name: str
    digest: str
    redacted: str
    created_at: float
    expires_at: float | None = None
    last_used_at: float | None = None
    user_id: str | None = None  # a user of the organization
    scopes: str | None = None  # JSON list of scopes (a restricted key); None: all


@frozen
class KeyOwner:
    """A key found by its digest, with what a request needs to know about it: the service
    account that owns it (``None``: a user's key, :attr:`KeyRow.user_id`)."""

    key: KeyRow
    account: ServiceAccountRow | None


@frozen
class ListQuery:
    after: str | None = None
    limit: int = 20
    order: Order = "asc"


class SqlProjectStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    # --- the shared secret and epoch -----------------------------------------------------

    async def secret(self) -> str:
        """The secret keys are hashed under (made by the first process that needs it)."""
        found = await self._runner.read(_secret)
        if found is not None:
            return found
        await self._runner.write(_create_state)
        made = await self._runner.read(_secret)
        assert made is not None
        return made

    async def epoch(self) -> int:
        return await self._runner.read(_epoch)

    # --- projects --------------------------------------------------------------------------

    async def ensure_default(self, now: float) -> None:
        """Create the default project unless it exists (a fresh or emptied database)."""
        await self._runner.write(partial(_ensure_default, now))

    async def create_project(self, row: ProjectRow) -> None:
        await self._runner.write(partial(_insert, PR, asdict(row)))

    async def get_project(self, project_id: str) -> ProjectRow | None:
        return await self._runner.read(partial(_get_project, project_id))

    async def list_projects(self, query: ListQuery, *, archived: bool) -> Page[ProjectRow] | None:
        return await self._runner.read(partial(_list_projects, query, archived))

    async def rename_project(self, project_id: str, name: str) -> ProjectRow | None:
        return await self._runner.write(partial(_rename_project, project_id, name))

    async def archive_project(self, project_id: str, now: float) -> ProjectRow | None:
        return await self._runner.write(partial(_archive_project, project_id, now))

    async def set_policy(self, project_id: str, **policy: str | float | None) -> ProjectRow | None:
        """Set ``model_policy`` and/or ``tool_policy`` (JSON text), ``response_timeout`` or
        ``response_retention`` (seconds); None clears one."""
        return await self._runner.write(partial(_set_policy, project_id, policy))

    # --- service accounts and keys -----------------------------------------------------------

    async def create_account(self, account: ServiceAccountRow, key: KeyRow | None) -> None:
        await self._runner.write(partial(_create_account, account, key))

    async def get_account(self, project_id: str, account_id: str) -> ServiceAccountRow | None:
        return await self._runner.read(partial(_get_account, project_id, account_id))

    async def list_accounts(
        self, project_id: str, query: ListQuery
    ) -> Page[ServiceAccountRow] | None:
        return await self._runner.read(partial(_list_accounts, project_id, query))

    async def delete_account(self, project_id: str, account_id: str) -> bool:
        return await self._runner.write(partial(_delete_account, project_id, account_id))

    async def add_key(self, key: KeyRow) -> None:
        await self._runner.write(partial(_insert, K, asdict(key)))

    async def get_key(self, project_id: str, key_id: str) -> KeyOwner | None:
        return await self._runner.read(partial(_get_key, project_id, key_id))

    async def list_keys(self, project_id: str, query: ListQuery) -> Page[KeyOwner] | None:
        return await self._runner.read(partial(_list_keys, project_id, query))

    async def set_key_expiry(self, project_id: str, key_id: str, expires_at: float) -> bool:
        return await self._runner.write(
            partial(_set_key(expires_at=expires_at), project_id, key_id)
        )

    async def set_key_scopes(self, project_id: str, key_id: str, scopes: str | None) -> bool:
        """Restrict the key to ``scopes`` (JSON list); ``None``: every permission again."""
        return await self._runner.write(partial(_set_key(scopes=scopes), project_id, key_id))

    async def delete_key(self, project_id: str, key_id: str) -> bool:
        return await self._runner.write(partial(_delete_key, project_id, key_id))

    async def find_key(self, digest: str) -> KeyOwner | None:
        """The key with this digest, if its project is active."""
        return await self._runner.read(partial(_find_key, digest))

    async def touch_key(self, key_id: str, now: float) -> None:
        await self._runner.write_statement(partial(_touch_key, key_id, now))


# --- the secret and epoch ------------------------------------------------------------------


def _secret(conn: Connection) -> str | None:
    found = conn.scalar(sa.select(AS.c.secret).where(AS.c.id == 1))
    return None if found is None else str(found)


def _create_state(conn: Connection) -> None:
    """The state row, unless another process made it first (they may start together)."""
    row = {"id": 1, "secret": secrets.token_urlsafe(48), "epoch": 0}
    insert = upsert(conn, AS)
    conn.execute(insert.values(**row).on_conflict_do_nothing(index_elements=[AS.c.id]))


def _epoch(conn: Connection) -> int:
    return int(conn.scalar(sa.select(AS.c.epoch).where(AS.c.id == 1)) or 0)


def bump_epoch(conn: Connection) -> None:
    """Tell every process that cached keys or project policies may be stale."""
    _bump(conn)


def _bump(conn: Connection) -> None:
    conn.execute(AS.update().where(AS.c.id == 1).values(epoch=AS.c.epoch + 1))
    notify(conn, AUTH_CHANNEL)


def _insert(table: sa.Table, values: dict[str, Any], conn: Connection) -> None:
    conn.execute(table.insert().values(**values))


# --- projects ------------------------------------------------------------------------------

_PROJECT_COLUMNS = (
    PR.c.id,
    PR.c.name,
    PR.c.created_at,
    PR.c.archived_at,
    PR.c.model_policy,
    PR.c.tool_policy,
    PR.c.response_timeout,
    PR.c.response_retention,
    PR.c.access_rules,
)


def _project(row: Any) -> ProjectRow:
    return ProjectRow(*(getattr(row, c.name) for c in _PROJECT_COLUMNS))


def _get_project(project_id: str, conn: Connection) -> ProjectRow | None:
    row = conn.execute(sa.select(*_PROJECT_COLUMNS).where(PR.c.id == project_id)).first()
    return None if row is None else _project(row)


def _list_projects(query: ListQuery, archived: bool, conn: Connection) -> Page[ProjectRow] | None:
    select = sa.select(*_PROJECT_COLUMNS)
    if not archived:
        select = select.where(PR.c.archived_at.is_(None))
    after = _seq(conn, PR, PR.c.id == query.after, query.after)
    if after == -1:
        return None
    return keyset_page(
        conn, select, PR.c.seq, order=query.order, limit=query.limit, row=_project, after=after
    )


def _ensure_default(now: float, conn: Connection) -> None:
    row = {"id": DEFAULT_PROJECT, "name": "Default project", "created_at": now}
    insert = upsert(conn, PR)
    conn.execute(insert.values(**row).on_conflict_do_nothing(index_elements=[PR.c.id]))


def _set_policy(
    project_id: str, policy: dict[str, str | float | None], conn: Connection
) -> ProjectRow | None:
    if conn.execute(PR.update().where(PR.c.id == project_id).values(**policy)).rowcount:
        _bump(conn)
    return _get_project(project_id, conn)


def _rename_project(project_id: str, name: str, conn: Connection) -> ProjectRow | None:
    conn.execute(PR.update().where(PR.c.id == project_id).values(name=name))
    return _get_project(project_id, conn)


def _archive_project(project_id: str, now: float, conn: Connection) -> ProjectRow | None:
    active = sa.and_(PR.c.id == project_id, PR.c.archived_at.is_(None))
    if conn.execute(PR.update().where(active).values(archived_at=now)).rowcount:
        _bump(conn)
    return _get_project(project_id, conn)


# --- service accounts ----------------------------------------------------------------------

_ACCOUNT_COLUMNS = (SA.c.id, SA.c.project_id, SA.c.name, SA.c.role, SA.c.created_at)


def _account(row: Any) -> ServiceAccountRow:
    return ServiceAccountRow(row.id, row.project_id, row.name, row.role, row.created_at)


def _create_account(account: ServiceAccountRow, key: KeyRow | None, conn: Connection) -> None:
    conn.execute(SA.insert().values(**asdict(account)))
    if key is not None:
        conn.execute(K.insert().values(**asdict(key)))


def _get_account(project_id: str, account_id: str, conn: Connection) -> ServiceAccountRow | None:
    mine = sa.and_(SA.c.id == account_id, SA.c.project_id == project_id)
    row = conn.execute(sa.select(*_ACCOUNT_COLUMNS).where(mine)).first()
    return None if row is None else _account(row)


def _list_accounts(
    project_id: str, query: ListQuery, conn: Connection
) -> Page[ServiceAccountRow] | None:
    select = sa.select(*_ACCOUNT_COLUMNS).where(SA.c.project_id == project_id)
    mine = sa.and_(SA.c.id == query.after, SA.c.project_id == project_id)
    after = _seq(conn, SA, mine, query.after)
    if after == -1:
        return None
    return keyset_page(
        conn, select, SA.c.seq, order=query.order, limit=query.limit, row=_account, after=after
    )


def _delete_account(project_id: str, account_id: str, conn: Connection) -> bool:
    conn.execute(
        K.delete().where(K.c.service_account_id == account_id, K.c.project_id == project_id)
    )
    mine = sa.and_(SA.c.id == account_id, SA.c.project_id == project_id)
    deleted = conn.execute(SA.delete().where(mine)).rowcount > 0
    if deleted:
        _bump(conn)
    return deleted


# --- keys ----------------------------------------------------------------------------------

_KEY_COLUMNS = (
    K.c.id,
    K.c.project_id,
    K.c.service_account_id,
    K.c.name,
    K.c.digest,
    K.c.redacted,
    K.c.created_at,
    K.c.expires_at,
    K.c.last_used_at,
    K.c.user_id,
    K.c.scopes,
)
_KEYS = sa.select(*_KEY_COLUMNS, *(c.label(f"a_{c.name}") for c in _ACCOUNT_COLUMNS)).outerjoin(
    SA, sa.and_(SA.c.id == K.c.service_account_id, SA.c.project_id == K.c.project_id)
)
# Authentication: which project a key is of.
_FIND = across_projects(
    _KEYS.join(PR, PR.c.id == K.c.project_id).where(
        K.c.digest == sa.bindparam("digest"), PR.c.archived_at.is_(None)
    )
)


def _owner(row: Any) -> KeyOwner:
    key = KeyRow(*(getattr(row, c.name) for c in _KEY_COLUMNS))
    if row.a_id is None:  # a user's key
        return KeyOwner(key, None)
    account = ServiceAccountRow(*(getattr(row, f"a_{c.name}") for c in _ACCOUNT_COLUMNS))
    return KeyOwner(key, account)


def _get_key(project_id: str, key_id: str, conn: Connection) -> KeyOwner | None:
    row = conn.execute(_KEYS.where(K.c.id == key_id, K.c.project_id == project_id)).first()
    return None if row is None else _owner(row)


def _list_keys(project_id: str, query: ListQuery, conn: Connection) -> Page[KeyOwner] | None:
    select = _KEYS.where(K.c.project_id == project_id)
    after = _seq(conn, K, sa.and_(K.c.id == query.after, K.c.project_id == project_id), query.after)
    if after == -1:
        return None
    return keyset_page(
        conn, select, K.c.seq, order=query.order, limit=query.limit, row=_owner, after=after
    )


def _delete_key(project_id: str, key_id: str, conn: Connection) -> bool:
    mine = sa.and_(K.c.id == key_id, K.c.project_id == project_id)
    deleted = conn.execute(K.delete().where(mine)).rowcount > 0
    if deleted:
        _bump(conn)
    return deleted


def _set_key(**values: float | str | None) -> Callable[[str, str, Connection], bool]:
    def set_(project_id: str, key_id: str, conn: Connection) -> bool:
        mine = sa.and_(K.c.id == key_id, K.c.project_id == project_id)
        updated = conn.execute(K.update().where(mine).values(**values)).rowcount > 0
        if updated:
            _bump(conn)
        return updated

    return set_


def _find_key(digest: str, conn: Connection) -> KeyOwner | None:
    row = conn.execute(_FIND, {"digest": digest}).first()
    return None if row is None else _owner(row)


def _touch_key(key_id: str, now: float, conn: Connection) -> None:
    conn.execute(across_projects(K.update()).where(K.c.id == key_id).values(last_used_at=now))


def _seq(
    conn: Connection, table: sa.Table, where: sa.ColumnElement[bool], given: str | None
) -> int | None:
    """The ``seq`` of the row a cursor names; ``None`` without a cursor, -1 for an unknown one."""
    if given is None:
        return None
    seq = conn.scalar(sa.select(table.c.seq).where(where))
    return -1 if seq is None else int(seq)
