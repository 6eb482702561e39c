"""The audit log: every change an administrator makes, and every change to a project's data,
with who made it: the key, and the user or service account it is of (OpenAI's shapes)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping

from agentloom.api.admin import AuditLogEntry
from agentloom.api.lists import ListPage
from agentloom.auth.actor import actor_of, current_principal
from agentloom.errors import NotFoundError
from agentloom.ids import new_id
from agentloom.storage.audit import AuditQuery, AuditRow, SqlAuditStore

__all__ = ["AuditLog"]


class AuditLog:
    def __init__(self, store: SqlAuditStore, *, actor: str = "anonymous") -> None:
        self._store = store
        self._actor = actor  # who acts when no key does (the CLI; a server without keys)

    async def record(
        self,
        kind: str,
        *,
        subject: str,
        project: tuple[str, str | None] | None = None,
        details: Mapping[str, object] | None = None,
    ) -> None:
        """Log ``kind`` (``project.created`` ...) done to ``subject`` (an id), in ``project``
        (id, name if known); ``details`` go in the entry's ``<kind>`` object beside the id."""
        now = time.time()
        actor = actor_of(current_principal(), self._actor)
        entry: dict[str, object] = {
            "id": new_id("audit_log"),
            "type": kind,
            "effective_at": int(now),
            "actor": actor.body,
            kind: {"id": subject, **(details or {})},
        }
        if project is not None:
            named = {} if project[1] is None else {"name": project[1]}
            entry["project"] = {"id": project[0], **named}
        row = AuditRow(
            id=str(entry["id"]),
            type=kind,
            effective_at=now,
            project_id=None if project is None else project[0],
            actor_id=actor.id,
            actor_user_id=actor.user_id,
            body=json.dumps(entry),
        )
        await self._store.add(row)

    async def list(self, query: AuditQuery) -> ListPage[AuditLogEntry]:
        page = await self._store.list_page(query)
        if page is None:
            given = query.after or query.before
            raise NotFoundError(f"No audit log entry '{given}' to page from.", param="after")
        data = [AuditLogEntry.model_validate_json(row.body) for row in page.data]
        return ListPage[AuditLogEntry].of(data, has_more=page.has_more)
