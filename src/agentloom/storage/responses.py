"""The response store: SQLAlchemy Core statements, the same on SQLite and PostgreSQL.

Each operation is a synchronous function of a connection, run by the database's
:class:`~agentloom.storage.runner.Runner` (a worker thread for SQLite, ``run_sync`` on asyncpg
for PostgreSQL). Statements are built once, so SQLAlchemy's compiled cache serves every call.
The writes on every response's path are the exception: one data-modifying statement each on
asyncpg directly for PostgreSQL, plain DBAPI statements on SQLite (see ``_SQL_INSERT_RESPONSE``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.access_rules import Action
from agentloom.errors import NotFoundError
from agentloom.storage import schema
from agentloom.storage.base import (
    ConversationTurn,
    ItemRow,
    Order,
    Page,
    ResponseQuery,
    ResponseRow,
    StoredResponse,
    StoredTrace,
)
from agentloom.storage.conversations import end_turn
from agentloom.storage.pages import keyset_page
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import (
    Project,
    ProjectRunner,
    across_projects,
    acting_owner,
    in_project,
)

R = schema.responses
I = schema.items  # noqa: E741

_RESPONSE_COLUMNS = (R.c.id, R.c.created_at, R.c.model, R.c.status, R.c.previous_response_id)
_SELECT_RESPONSE = sa.select(*_RESPONSE_COLUMNS, R.c.body)
_GET_RESPONSE = _SELECT_RESPONSE.where(R.c.id == sa.bindparam("rid"), in_project(R))
_GET_OUTPUT = (
    sa.select(I.c.id, I.c.body)
    .where(I.c.response_id == sa.bindparam("rid"), I.c.kind == schema.OUTPUT, in_project(I))
    .order_by(I.c.position)
)
_GET_OUTPUTS = (
    sa.select(I.c.response_id, I.c.id, I.c.body)
    .where(
        I.c.response_id.in_(sa.bindparam("rids", expanding=True)),
        I.c.kind == schema.OUTPUT,
        in_project(I),
    )
    .order_by(I.c.response_id, I.c.position)
)
_GET_TRACE = sa.select(R.c.status, R.c.trace).where(R.c.id == sa.bindparam("rid"), in_project(R))
_SEQ_OF = sa.select(R.c.seq).where(R.c.id == sa.bindparam("rid"), in_project(R))
_FIND_ITEM = (
    sa.select(I.c.id, I.c.body)
    .where(I.c.id == sa.bindparam("iid"), in_project(I))
    .order_by(I.c.seq.desc())
).limit(1)


def _history_query(
    *allowed: sa.ColumnElement[bool],
) -> sa.Select[tuple[int, str | None, str | None]]:
    """Items of the response (one the access rules let the viewer read: ``allowed``) and of its
    ``previous_response_id`` ancestors, oldest first."""
    start = sa.select(R.c.id, R.c.previous_response_id, sa.literal(0).label("depth")).where(
        R.c.id == sa.bindparam("rid"), in_project(R), *allowed
    )
    chain = start.cte("chain", recursive=True)
    step = (
        sa.select(R.c.id, R.c.previous_response_id, (chain.c.depth + 1).label("depth"))
        .join(chain, R.c.id == chain.c.previous_response_id)
        .where(in_project(R))
    )
    chain = chain.union_all(step)
    items = sa.and_(I.c.response_id == chain.c.id, in_project(I))
    return (
        sa.select(chain.c.depth, I.c.id, I.c.body)
        .select_from(chain.outerjoin(I, items))
        .order_by(chain.c.depth.desc(), I.c.kind, I.c.position)
    )


_HISTORY = _history_query()


# PostgreSQL writes a response and its items in one statement (data-modifying CTEs), so the two
# writes on a response's path are one round trip each, sent to asyncpg directly
# (``Runner.execute``; the project is ``$1``, as :class:`ProjectRunner` passes it). Other
# databases use a transaction.
def _pg_items(project: int, first: int) -> str:
    """Items from the parallel arrays ``$first`` .. ``$first+3`` (see ``_item_arrays``)."""
    ids, kinds, positions, bodies = (f"${first + n}" for n in range(4))
    return f"""
INSERT INTO items (id, response_id, kind, position, body, project_id)
SELECT t.id, (SELECT id FROM r), t.kind, t.position, t.body, ${project}
FROM unnest({ids}::text[], {kinds}::smallint[], {positions}::int[], {bodies}::text[])
    AS t(id, kind, position, body)"""


_PG_BEGIN = """
WITH r AS (
    INSERT INTO responses
        (project_id, id, created_at, model, status, previous_response_id, body, instance_id,
         trace, owner)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
    RETURNING id
)""" + _pg_items(1, 11)
_PG_FINISH = """
WITH r AS (
    UPDATE responses SET status = $3, body = $4, trace = $5
    WHERE responses.id = $2 AND responses.project_id = $1 RETURNING id
)""" + _pg_items(1, 6)


class SqlResponseStore:
    def __init__(self, runner: Runner, *, instance_id: str) -> None:
        self._runner = ProjectRunner(runner)
        self._instance_id = instance_id

    async def begin(self, response: ResponseRow, input_items: Sequence[ItemRow]) -> None:
        if self._runner.dialect == "postgresql":
            items = _item_arrays((schema.INPUT, input_items))
            await self._runner.execute(_PG_BEGIN, *self._pg_row(response), *items)
        else:
            write = partial(_begin, response, input_items, self._instance_id)
            await self._runner.write(write, brief=_brief(response, input_items))

    async def save(
        self,
        response: ResponseRow,
        input_items: Sequence[ItemRow],
        output_items: Sequence[ItemRow],
        turn: ConversationTurn | None = None,
    ) -> None:
        if self._runner.dialect == "postgresql":
            items = _item_arrays((schema.INPUT, input_items), (schema.OUTPUT, output_items))
            await self._write_pg(_PG_BEGIN, (*self._pg_row(response), *items), turn)
            return
        write = partial(_save, response, input_items, output_items, self._instance_id)
        brief = _brief(response, input_items, output_items)
        await self._runner.write(partial(_with_turn, write, turn), brief=brief)

    async def finish(
        self,
        response: ResponseRow,
        output_items: Sequence[ItemRow],
        turn: ConversationTurn | None = None,
    ) -> None:
        if self._runner.dialect == "postgresql":
            r = response
            items = _item_arrays((schema.OUTPUT, output_items))
            args = (r.id, r.status, r.body, r.trace, *items)
            await self._write_pg(_PG_FINISH, args, turn)
            return
        write = partial(_finish, response, output_items)
        brief = _brief(response, output_items)
        await self._runner.write(partial(_with_turn, write, turn), brief=brief)

    async def _write_pg(
        self, sql: str, args: tuple[object, ...], turn: ConversationTurn | None
    ) -> None:
        """One statement (one round trip) alone; a transaction when a conversation turn ends
        with it."""
        if turn is None:
            await self._runner.execute(sql, *args)
        else:
            write = partial(_execute_driver_sql, sql, args)
            await self._runner.write(partial(_with_turn, write, turn))

    def _pg_row(self, r: ResponseRow) -> tuple[object, ...]:
        """``_PG_BEGIN``'s response parameters after the project, in order."""
        created = float(r.created_at)
        previous, owner = r.previous_response_id, acting_owner()
        return (
            r.id,
            created,
            r.model,
            r.status,
            previous,
            r.body,
            self._instance_id,
            r.trace,
            owner,
        )

    async def start(self, response: ResponseRow, input_items: Sequence[ItemRow]) -> None:
        write = partial(_start, response, input_items)
        await self._runner.write(write, brief=_brief(response, input_items))

    async def reset(self, response: ResponseRow) -> None:
        await self._runner.write(partial(_reset, response))

    async def get(self, response_id: str) -> StoredResponse | None:
        return await self._runner.read(partial(_get, response_id))

    async def trace(self, response_id: str) -> StoredTrace | None:
        return await self._runner.read(partial(_trace, response_id))

    async def exists(self, response_id: str, action: Action = "read") -> bool:
        return await self._runner.read(partial(_exists, response_id, action))

    async def delete(self, response_id: str) -> bool:
        return await self._runner.write(partial(_delete, response_id))

    async def list_page(self, query: ResponseQuery) -> Page[ResponseRow]:
        return await self._runner.read(partial(_list, query))

    async def outputs(self, response_ids: Sequence[str]) -> dict[str, list[ItemRow]]:
        return await self._runner.read(partial(_outputs, tuple(response_ids)))

    async def input_items(
        self,
        response_id: str,
        *,
        after: str | None,
        before: str | None,
        limit: int,
        order: Order,
    ) -> Page[ItemRow] | None:
        query = partial(_input_items, response_id, after, before, limit, order)
        return await self._runner.read(query)

    async def history(self, response_id: str) -> list[ItemRow] | None:
        return await self._runner.read(partial(_history, response_id))

    async def find_item(self, item_id: str) -> ItemRow | None:
        return await self._runner.read(partial(_find_item, item_id))


# --- operations ------------------------------------------------------------------------------


def _item_arrays(*groups: tuple[int, Sequence[ItemRow]]) -> tuple[list[Any], ...]:
    """``(kind, items)`` groups as the parallel arrays that ``_pg_items`` unnests: ids, kinds,
    positions, bodies."""
    ids: list[str] = []
    kinds: list[int] = []
    positions: list[int] = []
    bodies: list[str] = []
    for kind, items in groups:
        ids += [i.id for i in items]
        bodies += [i.body for i in items]
        kinds += [kind] * len(items)
        positions += range(len(items))
    return ids, kinds, positions, bodies


def _execute_driver_sql(
    sql: str, args: tuple[object, ...], project: Project, conn: Connection
) -> None:
    conn.exec_driver_sql(sql, (project.id, *args))


BRIEF_ROWS = 64  # items a response's write may carry and still be brief (Runner.write)
BRIEF_BYTES = 256 * 1024  # and bytes of JSON, its row's included


def _brief(response: ResponseRow, *items: Sequence[ItemRow]) -> bool:
    """Whether writing ``response`` with ``items`` is brief: a few rows, a few milliseconds at
    most, as nearly every response's (SQLite runs it on the event loop's own thread)."""
    if sum(map(len, items)) > BRIEF_ROWS:
        return False
    size = len(response.body) + len(response.trace or "")
    size += sum(len(row.body) for group in items for row in group)
    return size <= BRIEF_BYTES


def _with_turn(
    write: Callable[[Project, Connection], None],
    turn: ConversationTurn | None,
    project: Project,
    conn: Connection,
) -> None:
    write(project, conn)
    if turn is not None:
        end_turn(turn, project, conn)


# The write path runs on every stored response. SQLAlchemy's execution machinery cost ~0.15 ms
# of CPU (and GIL) per response there, so these statements go to the DBAPI cursor directly, in
# the transaction the runner opened; ``?`` placeholders serve SQLite, the only user of this path.
_SQL_INSERT_RESPONSE = (
    "INSERT INTO responses (id, created_at, model, status, previous_response_id, instance_id,"
    " body, trace, project_id, owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_SQL_UPDATE_RESPONSE = (
    "UPDATE responses SET status = ?, body = ?, trace = ? WHERE id = ? AND project_id = ?"
)
_SQL_INSERT_ITEMS = (
    "INSERT INTO items (id, response_id, kind, position, body, project_id)"
    " VALUES (?, ?, ?, ?, ?, ?)"
)


def _cursor(conn: Connection) -> Any:
    return conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]


def _begin(
    response: ResponseRow,
    items: Sequence[ItemRow],
    instance_id: str,
    project: Project,
    conn: Connection,
) -> None:
    cursor = _cursor(conn)
    r = response
    row = (r.id, r.created_at, r.model, r.status, r.previous_response_id, instance_id, r.body)
    cursor.execute(_SQL_INSERT_RESPONSE, (*row, r.trace, project.id, project.owner))
    _insert_items(cursor, project, response.id, schema.INPUT, items)


def _save(
    response: ResponseRow,
    inputs: Sequence[ItemRow],
    outputs: Sequence[ItemRow],
    instance_id: str,
    project: Project,
    conn: Connection,
) -> None:
    _begin(response, inputs, instance_id, project, conn)
    _insert_items(_cursor(conn), project, response.id, schema.OUTPUT, outputs)


def _finish(
    response: ResponseRow, items: Sequence[ItemRow], project: Project, conn: Connection
) -> None:
    r, cursor = response, _cursor(conn)
    cursor.execute(_SQL_UPDATE_RESPONSE, (r.status, r.body, r.trace, r.id, project.id))
    _insert_items(cursor, project, response.id, schema.OUTPUT, items)


def _insert_items(
    cursor: Any, project: Project, response_id: str, kind: int, rows: Sequence[ItemRow]
) -> None:
    if rows:
        cursor.executemany(
            _SQL_INSERT_ITEMS,
            [(r.id, response_id, kind, i, r.body, project.id) for i, r in enumerate(rows)],
        )


def _update(response: ResponseRow, project: Project, conn: Connection) -> None:
    """The run's own write of its response (as the run's finishing write: no access rule's
    ``update``, which is the API's)."""
    values = {"status": response.status, "body": response.body, "trace": response.trace}
    mine = sa.and_(R.c.project_id == project.id, R.c.id == response.id)
    conn.execute(R.update().where(mine).values(values))


def _start(
    response: ResponseRow, inputs: Sequence[ItemRow], project: Project, conn: Connection
) -> None:
    _update(response, project, conn)
    if inputs:
        rows = [
            {
                "id": item.id,
                "response_id": response.id,
                "kind": schema.INPUT,
                "position": position,
                "body": item.body,
            }
            for position, item in enumerate(inputs)
        ]
        conn.execute(project.insert(I), rows)


def _reset(response: ResponseRow, project: Project, conn: Connection) -> None:
    conn.execute(project.delete(I, I.c.response_id == response.id))
    _update(response, project, conn)


def _get(response_id: str, project: Project, conn: Connection) -> StoredResponse | None:
    row = conn.execute(project.visible(_GET_RESPONSE, R), project.params(rid=response_id)).first()
    if row is None:
        return None
    output = [ItemRow.of(r) for r in conn.execute(_GET_OUTPUT, project.params(rid=response_id))]
    return StoredResponse(response=_response_row(row), output=output)


def _trace(response_id: str, project: Project, conn: Connection) -> StoredTrace | None:
    row = conn.execute(project.visible(_GET_TRACE, R), project.params(rid=response_id)).first()
    return None if row is None else StoredTrace(status=row.status, trace=row.trace)


def _exists(response_id: str, action: Action, project: Project, conn: Connection) -> bool:
    found = project.visible(_SEQ_OF, R, action)
    return conn.scalar(found, project.params(rid=response_id)) is not None


def _delete(response_id: str, project: Project, conn: Connection) -> bool:
    mine = sa.select(R.c.id).where(R.c.project_id == project.id, R.c.id == response_id)
    owned = conn.execute(project.visible(mine, R, "delete"))
    return delete_responses([response_id], conn, project) > 0 if owned.first() else False


def delete_responses(ids: Sequence[str], conn: Connection, project: Project | None = None) -> int:
    """The responses ``ids`` and everything they own: their items (input and output) and
    their stream events; how many responses went. ``DELETE /v1/responses/{id}`` (in its
    ``project``) and retention's sweep (of every project: ``None``) both delete so."""
    E = schema.response_events
    conn.execute(_deleting(I, I.c.response_id.in_(ids), project))
    conn.execute(_deleting(E, E.c.response_id.in_(ids), project))
    return int(conn.execute(_deleting(R, R.c.id.in_(ids), project)).rowcount)


def _deleting(
    table: sa.Table, criterion: sa.ColumnElement[bool], project: Project | None
) -> sa.Delete:
    """A delete of ``table``'s rows that match, in ``project`` (``None``: any)."""
    if project is None:
        return across_projects(table.delete().where(criterion))
    return project.delete(table, criterion)


def _list(query: ResponseQuery, project: Project, conn: Connection) -> Page[ResponseRow]:
    select = _SELECT_RESPONSE.where(project.rows(R, *_filters(query, conn.dialect.name)))
    cursor = _seq_of(conn, project, query.after) if query.after is not None else None
    return keyset_page(
        conn,
        select,
        R.c.seq,
        order=query.order,
        limit=query.limit,
        row=_response_row,
        after=cursor,
    )


def _filters(query: ResponseQuery, dialect: str) -> list[sa.ColumnElement[bool]]:
    """The conditions of ``query``'s filters: columns, and the stored body's ``metadata``."""
    found: list[sa.ColumnElement[bool]] = []
    if query.model is not None:
        found.append(R.c.model == query.model)
    if query.status is not None:
        found.append(R.c.status == query.status)
    if query.created_after is not None:
        found.append(R.c.created_at >= query.created_after)
    if query.created_before is not None:
        found.append(R.c.created_at < query.created_before)
    has_pair = _pg_has_pair if dialect == "postgresql" else _sqlite_has_pair
    found += [has_pair(key, value) for key, value in query.metadata]
    return found


def _pg_has_pair(key: str, value: str) -> sa.ColumnElement[bool]:
    """``body``'s metadata holds ``key: value`` (PostgreSQL: ``jsonb`` containment)."""
    from sqlalchemy.dialects.postgresql import JSONB

    metadata = sa.cast(R.c.body, JSONB)["metadata"]
    return metadata.contains(sa.func.jsonb_build_object(key, value))


def _sqlite_has_pair(key: str, value: str) -> sa.ColumnElement[bool]:
    """``body``'s metadata holds ``key: value`` (SQLite: ``json_each`` of the metadata, so a key
    is compared as it is, never read as a JSON path)."""
    pairs = sa.func.json_each(R.c.body, "$.metadata").table_valued("key", "value")
    return sa.exists().where(pairs.c.key == key, pairs.c.value == value)


def _outputs(
    response_ids: tuple[str, ...], project: Project, conn: Connection
) -> dict[str, list[ItemRow]]:
    found: dict[str, list[ItemRow]] = {rid: [] for rid in response_ids}
    if response_ids:
        for row in conn.execute(_GET_OUTPUTS, project.params(rids=list(response_ids))):
            found[row.response_id].append(ItemRow.of(row))
    return found


def _input_items(
    response_id: str,
    after: str | None,
    before: str | None,
    limit: int,
    order: Order,
    project: Project,
    conn: Connection,
) -> Page[ItemRow] | None:
    if not _exists(response_id, "read", project, conn):
        return None
    query = sa.select(I.c.id, I.c.body).where(_inputs(project, response_id))
    return keyset_page(
        conn,
        query,
        I.c.position,
        order=order,
        limit=limit,
        row=ItemRow.of,
        after=None if after is None else _position(conn, project, response_id, after, "after"),
        before=None if before is None else _position(conn, project, response_id, before, "before"),
    )


def _inputs(project: Project, response_id: str) -> sa.ColumnElement[bool]:
    return project.rows(I, I.c.response_id == response_id, I.c.kind == schema.INPUT)


def _history(response_id: str, project: Project, conn: Connection) -> list[ItemRow] | None:
    allowed = None if project.access is None else project.access.condition(R, "read")
    history = _HISTORY if allowed is None else _history_query(allowed)
    rows = conn.execute(history, project.params(rid=response_id)).all()
    if not rows:
        return None
    return [ItemRow.of(r) for r in rows if r.id is not None]


def _find_item(item_id: str, project: Project, conn: Connection) -> ItemRow | None:
    find = _FIND_ITEM
    if project.access is not None:  # an item follows its response
        find = find.where(I.c.response_id.in_(sa.select(R.c.id).where(project.rows(R))))
    row = conn.execute(find, project.params(iid=item_id)).first()
    return None if row is None else ItemRow.of(row)


# --- helpers ---------------------------------------------------------------------------------


def _response_row(row: Any) -> ResponseRow:
    return ResponseRow(
        id=row.id,
        created_at=row.created_at,
        model=row.model,
        status=row.status,
        previous_response_id=row.previous_response_id,
        body=row.body,
    )


def _seq_of(conn: Connection, project: Project, response_id: str) -> int:
    seq = conn.scalar(project.visible(_SEQ_OF, R), project.params(rid=response_id))
    if seq is None:
        raise NotFoundError(f"Response with id '{response_id}' not found.", param="after")
    return int(seq)


def _position(
    conn: Connection, project: Project, response_id: str, item_id: str, param: str
) -> int:
    query = sa.select(I.c.position).where(_inputs(project, response_id), I.c.id == item_id)
    position = conn.scalar(query.limit(1))
    if position is None:
        raise NotFoundError(f"Item with id '{item_id}' not found in this response.", param=param)
    return int(position)
