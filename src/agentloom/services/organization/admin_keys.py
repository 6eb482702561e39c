"""``/v1/organization/admin_api_keys``: more admin keys than the one from the environment.

An admin key made here works like the environment's (the organization's routes, and a project
named with ``OpenAI-Project``); its value is shown once, then only its keyed hash is kept. The
environment's key cannot be listed or deleted here: it is not stored.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from agentloom.api import admin
from agentloom.api.lists import ListPage
from agentloom.auth.keys import ADMIN_KEY_PREFIX, KeyHasher, new_key, redact
from agentloom.errors import NotFoundError
from agentloom.ids import new_id
from agentloom.services.organization.audit import AuditLog
from agentloom.storage.admin_keys import ADMIN_KEY_PREFIX as ID_PREFIX
from agentloom.storage.admin_keys import AdminKeyRow, SqlAdminKeyStore
from agentloom.storage.base import Order

__all__ = ["AdminKeysService"]


class AdminKeysService:
    def __init__(
        self,
        store: SqlAdminKeyStore,
        hasher: KeyHasher,
        audit: AuditLog,
        *,
        changed: Callable[[], None],
    ) -> None:
        self._store = store
        self._hasher = hasher
        self._audit = audit
        self._changed = changed

    async def create(self, request: admin.CreateAdminKeyRequest) -> admin.CreatedAdminKey:
        value = new_key(ADMIN_KEY_PREFIX)
        now = time.time()
        expires = None if request.expires_in_seconds is None else now + request.expires_in_seconds
        row = AdminKeyRow(
            id=new_id(ID_PREFIX),
            name=request.name,
            digest=self._hasher.digest(value),
            redacted=redact(value),
            created_at=now,
            expires_at=expires,
        )
        await self._store.create(row)
        self._changed()
        await self._audit.record("tenant.admin_api_key.created", subject=row.id)
        return admin.CreatedAdminKey(**_key(row).model_dump(), value=value)

    async def get(self, key_id: str) -> admin.AdminKey:
        row = await self._store.get(key_id)
        if row is None:
            raise _not_found(key_id)
        return _key(row)

    async def list(self, after: str | None, limit: int, order: Order) -> ListPage[admin.AdminKey]:
        page = await self._store.list_page(after, limit, order)
        if page is None:
            raise NotFoundError(f"No admin API key '{after}' to page from.", param="after")
        data = [_key(row) for row in page.data]
        return ListPage[admin.AdminKey].of(data, has_more=page.has_more)

    async def delete(self, key_id: str) -> admin.Deleted:
        if not await self._store.delete(key_id):
            raise _not_found(key_id)
        self._changed()
        await self._audit.record("tenant.admin_api_key.deleted", subject=key_id)
        return admin.Deleted(id=key_id, object="organization.admin_api_key.deleted")


def _key(row: AdminKeyRow) -> admin.AdminKey:
    return admin.AdminKey(
        id=row.id,
        name=row.name,
        redacted_value=row.redacted,
        created_at=int(row.created_at),
        expires_at=None if row.expires_at is None else int(row.expires_at),
        last_used_at=None if row.last_used_at is None else int(row.last_used_at),
    )


def _not_found(key_id: str) -> NotFoundError:
    return NotFoundError(f"No admin API key with id '{key_id}'.", param="key_id")
