"""The conversation store: conversations, their ordered items, and the per-conversation lock.

Items are ordered by ``seq`` (one autoincrement over all conversations), so a conversation's
history is one ordered index scan and a page is a keyset range. An item id is unique across all
conversations: an item can never be moved, or copied under its id, into another conversation.

A response running on a conversation holds its lock (``lock_response_id``, with the server
instance running it). While the holder's instance is alive (its heartbeat is recent), other
responses, item changes and deletion are refused with ``ConversationLockedError``; the lock of
an instance that stopped is simply taken over. Each change of the items bumps ``version``, which
lets the engine keep parsed histories and check them with the lock it takes anyway.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.access_rules import Action
from agentloom.errors import ConversationLockedError, DuplicateItemError, NotFoundError
from agentloom.storage import schema
from agentloom.storage.base import ConversationRow, ConversationTurn, ItemRow, Order, Page
from agentloom.storage.pages import keyset_page
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import Project, ProjectRunner, across_projects, in_project

log = logging.getLogger(__name__)

C = schema.conversations
CI = schema.conversation_items
INST = schema.instances

_GET = sa.select(
    C.c.id,
    C.c.created_at,
    C.c.metadata,
    C.c.version,
    C.c.lock_response_id,
    C.c.lock_instance_id,
).where(C.c.id == sa.bindparam("cid"), in_project(C))
_GET_FOR_UPDATE = _GET.with_for_update()
_ITEMS = (
    sa.select(CI.c.id, CI.c.body)
    .where(CI.c.conversation_id == sa.bindparam("cid"), in_project(CI))
    .order_by(CI.c.seq)
)
_ITEM = sa.select(CI.c.id, CI.c.body).where(
    CI.c.conversation_id == sa.bindparam("cid"),
    CI.c.id == sa.bindparam("iid"),
    in_project(CI),
)
_FIND_ITEM = sa.select(CI.c.id, CI.c.body).where(CI.c.id == sa.bindparam("iid"), in_project(CI))
# An item id is unique across every project's conversations (one unique index).
_TAKEN = across_projects(sa.select(CI.c.id).where(CI.c.id.in_(sa.bindparam("ids", expanding=True))))
_ITEM_SEQ = sa.select(CI.c.seq).where(
    CI.c.conversation_id == sa.bindparam("cid"), CI.c.id == sa.bindparam("iid"), in_project(CI)
)
_LIVE = sa.select(INST.c.id).where(INST.c.heartbeat_at >= sa.bindparam("since"))
_HOLDER_ALIVE = sa.select(INST.c.id).where(
    INST.c.id == sa.bindparam("iid"), INST.c.heartbeat_at >= sa.bindparam("since")
)
_LOCK = (
    C.update()
    .where(
        C.c.id == sa.bindparam("cid"),
        in_project(C),
        sa.or_(
            C.c.lock_response_id.is_(None),
            C.c.lock_instance_id.is_(None),
            C.c.lock_instance_id.not_in(_LIVE.scalar_subquery()),
        ),
    )
    .values(
        lock_response_id=sa.bindparam("rid"),
        lock_instance_id=sa.bindparam("inst"),
        lock_at=sa.bindparam("now"),
    )
    .returning(C.c.version)
)
_UNLOCK_VALUES = {"lock_response_id": None, "lock_instance_id": None, "lock_at": None}
_BUMP = (
    C.update()
    .where(C.c.id == sa.bindparam("cid"), in_project(C))
    .values(version=C.c.version + 1)
    .returning(C.c.version)
)

# Appending a turn never fails the response's final write over an item id taken meanwhile by
# another conversation (ids were checked before the response ran): such an item is skipped.
_SQLITE_APPEND = (
    "INSERT{or_ignore} INTO conversation_items (id, conversation_id, response_id, created_at,"
    " body, project_id) VALUES (?, ?, ?, ?, ?, ?)"
)
_PG_APPEND = """
INSERT INTO conversation_items (id, conversation_id, response_id, created_at, body, project_id)
SELECT t.id, :cid, :rid, :now, t.body, :project
FROM unnest(CAST(:ids AS text[]), CAST(:bodies AS text[])) WITH ORDINALITY AS t(id, body, n)
ORDER BY t.n"""
_INSERT_SQL = {
    # (dialect, skip taken ids)
    ("sqlite", False): _SQLITE_APPEND.format(or_ignore=""),
    ("sqlite", True): _SQLITE_APPEND.format(or_ignore=" OR IGNORE"),
}
_PG_INSERT = {
    False: sa.text(_PG_APPEND),
    True: sa.text(_PG_APPEND + "\nON CONFLICT (id) DO NOTHING"),
}


class SqlConversationStore:
    def __init__(self, runner: Runner, *, instance_id: str, abandoned_after: float) -> None:
        self._runner = ProjectRunner(runner)
        self._instance_id = instance_id
        self._abandoned_after = abandoned_after

    def _since(self) -> float:
        """Heartbeats older than this belong to stopped instances."""
        return time.time() - self._abandoned_after

    async def create(self, conversation: ConversationRow, items: Sequence[ItemRow]) -> None:
        await self._guarded(partial(_create, conversation, items), items)

    async def get(self, conversation_id: str) -> ConversationRow | None:
        return await self._runner.read(partial(_get, conversation_id))

    async def list_page(
        self, *, after: str | None, limit: int, order: Order
    ) -> Page[ConversationRow] | None:
        """The project's conversations by creation; ``None`` when ``after`` is not one of them."""
        return await self._runner.read(partial(_list, after, limit, order))

    async def update_metadata(self, conversation_id: str, metadata: str) -> ConversationRow | None:
        write = partial(_update_metadata, conversation_id, metadata)
        return await self._runner.write(write)

    async def delete(self, conversation_id: str) -> bool:
        write = partial(_delete, conversation_id, self._since())
        return await self._runner.write(write)

    async def add_items(self, conversation_id: str, items: Sequence[ItemRow]) -> int:
        write = partial(_add_items, conversation_id, items, self._since())
        version: int = await self._guarded(write, items)
        return version

    async def items(self, conversation_id: str) -> list[ItemRow]:
        return await self._runner.read(partial(_items, conversation_id))

    async def list_items(
        self, conversation_id: str, *, after: str | None, limit: int, order: Order
    ) -> Page[ItemRow] | None:
        read = partial(_list_items, conversation_id, after, limit, order)
        return await self._runner.read(read)

    async def get_item(self, conversation_id: str, item_id: str) -> ItemRow | None:
        read = partial(_get_item, conversation_id, item_id)
        return await self._runner.read(read)

    async def delete_item(self, conversation_id: str, item_id: str) -> bool:
        write = partial(_delete_item, conversation_id, item_id, self._since())
        return await self._runner.write(write)

    async def find_item(self, item_id: str) -> ItemRow | None:
        return await self._runner.read(partial(_find_item, item_id))

    async def taken(self, item_ids: Sequence[str]) -> list[str]:
        if not item_ids:
            return []
        return await self._runner.across_projects.read(partial(_taken, tuple(item_ids)))

    async def lock(self, conversation_id: str, response_id: str) -> int:
        values = {
            "cid": conversation_id,
            "rid": response_id,
            "inst": self._instance_id,
            "now": time.time(),
            "since": self._since(),
        }
        version = await self._runner.write_statement(partial(_lock, values))
        if version is None:
            read = partial(_why_not_locked, conversation_id)
            raise await self._runner.read(read)
        return version

    async def end_turn(self, turn: ConversationTurn) -> None:
        await self._runner.write(partial(end_turn, turn))

    async def _guarded(self, write: Any, items: Sequence[ItemRow]) -> Any:
        """Run ``write``; an id taken by a concurrent writer (the unique index) is the caller's
        ``DuplicateItemError``, as the check inside ``write`` would have said."""
        try:
            return await self._runner.write(write)
        except sa.exc.IntegrityError:
            taken = await self.taken([item.id for item in items])
            if not taken:
                raise
            raise DuplicateItemError(taken[0]) from None


# --- operations ------------------------------------------------------------------------------


def _row(row: Any) -> ConversationRow:
    return ConversationRow(
        id=row.id, created_at=row.created_at, metadata=row.metadata, version=row.version
    )


def _get(conversation_id: str, project: Project, conn: Connection) -> ConversationRow | None:
    row = conn.execute(project.visible(_GET, C), project.params(cid=conversation_id)).first()
    return None if row is None else _row(row)


def _readable(conversation_id: str, project: Project, conn: Connection) -> bool:
    """Whether the access rules let the viewer read the conversation (its items follow it);
    without rules the items' own statements say so."""
    return project.access is None or _get(conversation_id, project, conn) is not None


def _list(
    after: str | None, limit: int, order: Order, project: Project, conn: Connection
) -> Page[ConversationRow] | None:
    query = sa.select(C.c.id, C.c.created_at, C.c.metadata, C.c.version).where(project.rows(C))
    cursor = None
    if after is not None:
        cursor = conn.scalar(sa.select(C.c.seq).where(project.rows(C, C.c.id == after)))
        if cursor is None:
            return None
    return keyset_page(conn, query, C.c.seq, order=order, limit=limit, row=_row, after=cursor)


def _create(
    conversation: ConversationRow, items: Sequence[ItemRow], project: Project, conn: Connection
) -> None:
    _check_not_taken(conn, items)
    c = conversation
    version = 1 if items else 0
    conn.execute(
        project.insert(C).values(
            id=c.id, created_at=c.created_at, metadata=c.metadata, version=version
        )
    )
    _insert(conn, project, c.id, None, c.created_at, items)


def _update_metadata(
    conversation_id: str, metadata: str, project: Project, conn: Connection
) -> ConversationRow | None:
    changing = project.update(C, C.c.id == conversation_id).values(metadata=metadata)
    if not conn.execute(changing).rowcount and project.access is not None:
        return None  # refused by the access rules (readable or not), or not found
    return _get(conversation_id, project, conn)


def _delete(conversation_id: str, since: float, project: Project, conn: Connection) -> bool:
    if _unlocked_for_update(conn, project, conversation_id, since, "delete") is None:
        return False
    conn.execute(project.delete(CI, CI.c.conversation_id == conversation_id))
    conn.execute(project.delete(C, C.c.id == conversation_id))
    return True


def _add_items(
    conversation_id: str, items: Sequence[ItemRow], since: float, project: Project, conn: Connection
) -> int:
    if _unlocked_for_update(conn, project, conversation_id, since) is None:
        raise _conversation_not_found(conversation_id)
    _check_not_taken(conn, items)
    _insert(conn, project, conversation_id, None, time.time(), items)
    return int(conn.execute(_BUMP, project.params(cid=conversation_id)).scalar_one())


def _items(conversation_id: str, project: Project, conn: Connection) -> list[ItemRow]:
    if not _readable(conversation_id, project, conn):
        return []
    rows = conn.execute(_ITEMS, project.params(cid=conversation_id))
    return [ItemRow.of(r) for r in rows]


def _list_items(
    conversation_id: str,
    after: str | None,
    limit: int,
    order: Order,
    project: Project,
    conn: Connection,
) -> Page[ItemRow] | None:
    if _get(conversation_id, project, conn) is None:
        return None
    query = sa.select(CI.c.id, CI.c.body).where(
        project.rows(CI, CI.c.conversation_id == conversation_id)
    )
    cursor = None
    if after is not None:
        cursor = conn.scalar(_ITEM_SEQ, project.params(cid=conversation_id, iid=after))
        if cursor is None:
            raise NotFoundError(
                f"Item with id '{after}' not found in conversation '{conversation_id}'.",
                param="after",
            )
    return keyset_page(
        conn, query, CI.c.seq, order=order, limit=limit, row=ItemRow.of, after=cursor
    )


def _get_item(
    conversation_id: str, item_id: str, project: Project, conn: Connection
) -> ItemRow | None:
    if not _readable(conversation_id, project, conn):
        return None
    row = conn.execute(_ITEM, project.params(cid=conversation_id, iid=item_id)).first()
    return None if row is None else ItemRow.of(row)


def _delete_item(
    conversation_id: str, item_id: str, since: float, project: Project, conn: Connection
) -> bool:
    if _unlocked_for_update(conn, project, conversation_id, since) is None:
        raise _conversation_not_found(conversation_id)
    deleted = conn.execute(
        project.delete(CI, CI.c.conversation_id == conversation_id, CI.c.id == item_id)
    )
    if deleted.rowcount == 0:
        return False
    conn.execute(_BUMP, project.params(cid=conversation_id))
    return True


def _find_item(item_id: str, project: Project, conn: Connection) -> ItemRow | None:
    find = _FIND_ITEM
    if project.access is not None:  # an item follows its conversation
        find = find.where(CI.c.conversation_id.in_(sa.select(C.c.id).where(project.rows(C))))
    row = conn.execute(find, project.params(iid=item_id)).first()
    return None if row is None else ItemRow.of(row)


def _taken(item_ids: tuple[str, ...], conn: Connection) -> list[str]:
    taken = {row.id for row in conn.execute(_TAKEN, {"ids": list(item_ids)})}
    return [item_id for item_id in item_ids if item_id in taken]


def _lock(values: dict[str, object], project: Project, conn: Connection) -> int | None:
    lock = project.visible(_LOCK, C, "update")
    version = conn.execute(lock, project.params(**values)).scalar()
    return None if version is None else int(version)


def _why_not_locked(conversation_id: str, project: Project, conn: Connection) -> Exception:
    found = project.visible(_GET, C, "update")
    row = conn.execute(found, project.params(cid=conversation_id)).first()
    if row is None:
        return _conversation_not_found(conversation_id)
    return _locked(conversation_id, row.lock_response_id)


def end_turn(turn: ConversationTurn, project: Project, conn: Connection) -> None:
    """Append a finished response's items and release its lock (used inside the response
    store's final write too, so both land in one transaction)."""
    still_ours = (C.c.id == turn.conversation_id, C.c.lock_response_id == turn.response_id)
    version = C.c.version + 1 if turn.items else C.c.version
    ended = conn.execute(
        project.update(C, *still_ours).values(version=version, **_UNLOCK_VALUES).returning(C.c.id)
    ).first()
    if ended is None:
        log.warning(
            "response %s no longer holds conversation %s (deleted, or its lock was taken over): "
            "its items were not appended",
            turn.response_id,
            turn.conversation_id,
        )
        return
    _insert(
        conn,
        project,
        turn.conversation_id,
        turn.response_id,
        turn.created_at,
        turn.items,
        skip_taken=True,
    )


# --- helpers ---------------------------------------------------------------------------------


def _unlocked_for_update(
    conn: Connection,
    project: Project,
    conversation_id: str,
    since: float,
    action: Action = "update",
) -> Any:
    """The conversation's row, locked for this transaction; ``None`` if it does not exist (in
    this project, for the access rules' ``action``). Raises ``ConversationLockedError`` while a
    response of a live instance holds it."""
    found = project.visible(_GET_FOR_UPDATE, C, action)
    row = conn.execute(found, project.params(cid=conversation_id)).first()
    if row is not None and row.lock_response_id is not None and row.lock_instance_id is not None:
        alive = conn.execute(_HOLDER_ALIVE, {"iid": row.lock_instance_id, "since": since}).first()
        if alive is not None:
            raise _locked(conversation_id, row.lock_response_id)
    return row


def _check_not_taken(conn: Connection, items: Sequence[ItemRow]) -> None:
    if items:
        taken = _taken(tuple(item.id for item in items), conn)
        if taken:
            raise DuplicateItemError(taken[0])


def _insert(
    conn: Connection,
    project: Project,
    conversation_id: str,
    response_id: str | None,
    now: float,
    items: Sequence[ItemRow],
    *,
    skip_taken: bool = False,
) -> None:
    """Append ``items``; with ``skip_taken`` an id taken meanwhile is skipped, not an error."""
    if not items:
        return
    if conn.dialect.name == "postgresql":
        params = project.params(
            cid=conversation_id,
            rid=response_id,
            now=now,
            ids=[item.id for item in items],
            bodies=[item.body for item in items],
        )
        conn.execute(_PG_INSERT[skip_taken], params)
        return
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    rows = [(item.id, conversation_id, response_id, now, item.body, project.id) for item in items]
    cursor.executemany(_INSERT_SQL["sqlite", skip_taken], rows)


def _conversation_not_found(conversation_id: str) -> NotFoundError:
    return NotFoundError(
        f"Conversation with id '{conversation_id}' not found.", param="conversation_id"
    )


def _locked(conversation_id: str, response_id: str) -> ConversationLockedError:
    return ConversationLockedError(
        f"Conversation '{conversation_id}' is in use by response '{response_id}', which is still "
        "running; try again when it has finished."
    )
