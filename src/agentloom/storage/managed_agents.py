"""Managed agents and their messages, each a project's.

A streamed turn begins with one read (:meth:`SqlManagedAgentStore.turn_context`: the agent and
its conversation) and the user's message written; it ends with one transaction
(:meth:`SqlManagedAgentStore.end_turn`): the agent's reply stored and what the turn used added
to the agent's counters. Deleting an agent deletes everything it had: messages, runs (and their
stored stream frames), tasks, schedule, and its sessions, ticks and memory notes.
"""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.access_rules import Action
from agentloom.frozen import field_names, frozen
from agentloom.storage import schema
from agentloom.storage.base import Order, Page
from agentloom.storage.pages import keyset_page
from agentloom.storage.runner import Runner
from agentloom.storage.schedules import ScheduleRow
from agentloom.storage.schedules import insert as insert_schedule
from agentloom.storage.scoped import Project, ProjectRunner, in_project, restricted

A = schema.managed_agents
M = schema.managed_agent_messages
S = schema.schedules
SEEN = ("delivered", "incomplete")  # messages a turn's conversation is made of


@frozen
class AgentRow:
    id: str
    name: str
    agent_type: str
    config: str  # a JSON object
    status: str
    created_at: float
    updated_at: float
    template_id: str | None = None
    schedule_id: str | None = None
    summary_memory: str = ""
    total_runs: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    last_run_at: float | None = None
    last_activity_at: float | None = None


@frozen
class ScheduleView:
    """The agent's schedule as it runs."""

    id: str
    next_run_at: float
    runs: int
    every: float | None = None
    cron: str | None = None


@frozen
class StoredAgent:
    row: AgentRow
    schedule: ScheduleView | None = None


@frozen
class MessageRow:
    id: str
    agent_id: str
    direction: str  # user_to_agent, agent_to_user
    content: str
    mode: str  # queued, immediate
    status: str  # pending, delivered, incomplete
    created_at: float
    run_id: str | None = None
    tool_calls: str | None = None  # a JSON list
    stop_reason: str | None = None


@frozen
class TurnEnd:
    """What a turn leaves: its reply (if it said anything), the tokens it used, when; for a
    run, how the run ended."""

    reply: MessageRow | None
    input_tokens: int
    output_tokens: int
    at: float
    status: str | None = None  # the agent's status afterwards (None: as it is)
    run_id: str | None = None  # the turn was this run (counted in total_runs)
    run_status: str = "completed"
    run_error: str | None = None  # a JSON object: code, message


_AGENT = tuple(A.c[name] for name in field_names(AgentRow))
_MESSAGE = tuple(M.c[name] for name in field_names(MessageRow))
_SCHEDULE = (
    S.c.id.label("schedule_ref"),
    S.c.next_run_at,
    S.c.runs,
    S.c.every,
    S.c.cron,
)
# A turn's statements, built once (a statement built per call costs more than its query).
_AGENT_ROW = sa.select(*_AGENT).where(A.c.id == sa.bindparam("agent_id"), in_project(A))
_LATEST = (
    sa.select(*_MESSAGE)
    .where(M.c.agent_id == sa.bindparam("agent_id"), in_project(M), M.c.status.in_(SEEN))
    .order_by(M.c.seq.desc())
    .limit(sa.bindparam("limit", type_=sa.Integer))
)
_AGENT_WIDTH = len(field_names(AgentRow))


def _turn_context_sql(mark: str) -> str:
    """The agent (``{mark}2`` its id, ``{mark}1`` its project) and a row per message of its
    latest conversation (``{mark}3`` of them), in the driver's own SQL."""
    agent = ", ".join(f"a.{name}" for name in field_names(AgentRow))
    said = ", ".join(f"m.{name}" for name in field_names(MessageRow))
    seen = ", ".join(f"'{status}'" for status in SEEN)
    return (
        f"SELECT {agent}, {said} FROM managed_agents a"
        " LEFT JOIN managed_agent_messages m"
        f" ON m.agent_id = a.id AND m.project_id = {mark}1 AND m.seq IN ("
        " SELECT e.seq FROM managed_agent_messages e"
        f" WHERE e.agent_id = {mark}2 AND e.project_id = {mark}1 AND e.status IN ({seen})"
        f" ORDER BY e.seq DESC LIMIT {mark}3)"
        f" WHERE a.id = {mark}2 AND a.project_id = {mark}1 ORDER BY m.seq"
    )


_MESSAGE_COLUMNS = field_names(MessageRow)


def _add_message_sql(mark: str) -> str:
    """The insert of a message (``{mark}1`` its project, then its row's fields), in the
    driver's own SQL.

    On PostgreSQL the insert commits without waiting for its WAL to reach the disk
    (``synchronous_commit`` off for this statement's transaction alone, set by the statement
    itself: still one round trip). A streamed turn's first token waits for this write; the
    turn's end (its reply, :meth:`SqlManagedAgentStore.end_turn`) commits as usual, and the WAL
    is flushed in order, so once a turn has ended its message is as durable as any write. Only
    a crash of the database in the turn's first moments can lose the message of a turn whose
    stream then breaks off without its end."""
    columns = ("project_id", *_MESSAGE_COLUMNS)
    if mark == "?":
        places = ", ".join("?" for _ in columns)
        return f"INSERT INTO managed_agent_messages ({', '.join(columns)}) VALUES ({places})"
    typed = (f"${n}::{_pg_type(M.c[name].type)}" for n, name in enumerate(columns, 1))
    return (
        "WITH lazy AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true))"
        f" INSERT INTO managed_agent_messages ({', '.join(columns)})"
        f" SELECT {', '.join(typed)} FROM lazy"
    )


def _pg_type(kind: sa.types.TypeEngine[Any]) -> str:
    """A parameter's type: a string's is ``text`` (the column's own length is checked on
    assignment; a cast to ``varchar(n)`` would cut a longer value short)."""
    if isinstance(kind, sa.String):
        return "text"
    if isinstance(kind, sa.Float):
        return "double precision"
    raise TypeError(f"no parameter type for a {kind!r} column")  # a new column's: add it here


_PG_ADD_MESSAGE = _add_message_sql("$")
_SQLITE_ADD_MESSAGE = _add_message_sql("?")
_PG_TURN_CONTEXT = _turn_context_sql("$")
_SQLITE_TURN_CONTEXT = _turn_context_sql("?")


class SqlManagedAgentStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = ProjectRunner(runner)

    async def create(self, row: AgentRow, schedule: ScheduleRow | None = None) -> None:
        """Store the agent, with its schedule (if it has one) in the same transaction."""
        await self._runner.write(partial(_create, row, schedule))

    async def get(self, agent_id: str, action: Action = "read") -> StoredAgent | None:
        """The agent, if the access rules let the viewer ``action`` it."""
        return await self._runner.read(partial(_get, agent_id, action))

    async def row(self, agent_id: str) -> AgentRow | None:
        """The agent's row alone (no schedule)."""
        return await self._runner.read(partial(_row, agent_id))

    async def list_page(
        self, after: str | None, limit: int, order: Order
    ) -> Page[StoredAgent] | None:
        """``None`` when ``after`` is not one of the project's agents."""
        return await self._runner.read(partial(_list, after, limit, order))

    async def update(self, agent_id: str, values: dict[str, Any]) -> StoredAgent | None:
        return await self._runner.write(partial(_update, agent_id, values))

    async def delete(self, agent_id: str) -> bool:
        return await self._runner.write(partial(_delete, agent_id))

    async def add_message(self, row: MessageRow) -> None:
        """One statement on the driver itself (a streamed turn's first token waits for it)."""
        sql = _PG_ADD_MESSAGE if self._runner.dialect == "postgresql" else _SQLITE_ADD_MESSAGE
        await self._runner.execute(sql, *(getattr(row, name) for name in _MESSAGE_COLUMNS))

    async def turn_context(
        self, agent_id: str, history: int
    ) -> tuple[AgentRow, list[MessageRow]] | None:
        """The agent and the ``history`` latest messages of its conversation, oldest first
        (``None`` when there is no such agent): one query, on the driver itself (a streamed
        turn reads this before its first token)."""
        if restricted() and await self.get(agent_id, "update") is None:
            return None  # a turn adds to the agent's messages: the access rules' update
        sql = _PG_TURN_CONTEXT if self._runner.dialect == "postgresql" else _SQLITE_TURN_CONTEXT
        rows = await self._runner.fetch(sql, agent_id, max(history, 0))
        if not rows:
            return None
        values = [tuple(row) for row in rows]
        said = [MessageRow(*row[_AGENT_WIDTH:]) for row in values if row[_AGENT_WIDTH] is not None]
        return AgentRow(*values[0][:_AGENT_WIDTH]), said

    async def end_turn(self, agent_id: str, end: TurnEnd) -> None:
        await self._runner.write(partial(_end_turn, agent_id, end))

    async def messages(
        self, agent_id: str, after: str | None, limit: int, order: Order
    ) -> Page[MessageRow] | None:
        """``None`` when ``after`` is not one of the agent's messages."""
        read = partial(_messages, agent_id, after, limit, order)
        return await self._runner.read(read)


@frozen
class TakenMessages:
    messages: list[MessageRow]  # given to the run, oldest first
    history: list[MessageRow]  # the conversation before them, oldest first


def _agent(row: Any) -> AgentRow:
    return AgentRow(*(getattr(row, c.name) for c in _AGENT))


def _stored(row: Any) -> StoredAgent:
    schedule = None
    if row.schedule_ref is not None:
        schedule = ScheduleView(row.schedule_ref, row.next_run_at, row.runs, row.every, row.cron)
    return StoredAgent(_agent(row), schedule)


def _select(project: Project) -> sa.Select[Any]:
    """Agents with their schedules (the project's)."""
    with_schedule = A.outerjoin(S, project.rows(S, S.c.id == A.c.schedule_id))
    return sa.select(*_AGENT, *_SCHEDULE).select_from(with_schedule)


def _message(row: Any) -> MessageRow:
    return MessageRow(*(getattr(row, c.name) for c in _MESSAGE))


def _mine(project: Project, agent_id: str) -> sa.ColumnElement[bool]:
    return project.rows(A, A.c.id == agent_id)


def _create(
    row: AgentRow, schedule: ScheduleRow | None, project: Project, conn: Connection
) -> None:
    if schedule is not None:
        insert_schedule(schedule, project, conn)
    conn.execute(project.insert(A).values(**asdict(row)))


def _get(agent_id: str, action: Action, project: Project, conn: Connection) -> StoredAgent | None:
    mine = _select(project).where(A.c.project_id == project.id, A.c.id == agent_id)
    row = conn.execute(project.visible(mine, A, action)).first()
    return None if row is None else _stored(row)


def _row(
    agent_id: str, project: Project, conn: Connection, action: Action = "read"
) -> AgentRow | None:
    found = project.visible(_AGENT_ROW, A, action)
    row = conn.execute(found, project.params(agent_id=agent_id)).first()
    return None if row is None else _agent(row)


def _list(
    after: str | None, limit: int, order: Order, project: Project, conn: Connection
) -> Page[StoredAgent] | None:
    cursor = None
    if after is not None:
        cursor = conn.scalar(sa.select(A.c.seq).where(_mine(project, after)))
        if cursor is None:
            return None
    query = _select(project).where(project.rows(A))
    return keyset_page(conn, query, A.c.seq, order=order, limit=limit, row=_stored, after=cursor)


def _update(
    agent_id: str, values: dict[str, Any], project: Project, conn: Connection
) -> StoredAgent | None:
    if values:
        conn.execute(project.update(A, A.c.id == agent_id).values(**values))
    return _get(agent_id, "read", project, conn)


def _delete(agent_id: str, project: Project, conn: Connection) -> bool:
    agent = _row(agent_id, project, conn, "delete")
    if agent is None:
        return False
    runs = schema.managed_agent_runs
    run_ids = sa.select(runs.c.id).where(project.rows(runs, runs.c.agent_id == agent_id))
    conn.execute(
        project.delete(schema.response_events, schema.response_events.c.response_id.in_(run_ids))
    )
    for table in (runs, M, schema.managed_agent_tasks):
        conn.execute(project.delete(table, table.c.agent_id == agent_id))
    if agent.schedule_id is not None:
        conn.execute(project.delete(S, S.c.id == agent.schedule_id))
    for table in (schema.agent_sessions, schema.agent_ticks):
        conn.execute(table.delete().where(table.c.agent == agent_id))
    conn.execute(schema.memories.delete().where(schema.memories.c.namespace == agent_id))
    conn.execute(project.delete(A, A.c.id == agent_id))
    return True


def _add_message(row: MessageRow, project: Project, conn: Connection) -> None:
    conn.execute(project.insert(M).values(**asdict(row)))


def _history(
    agent_id: str, before: int | None, limit: int, project: Project, conn: Connection
) -> list[MessageRow]:
    """The ``limit`` latest messages of the conversation (those a turn saw or said) before the
    message numbered ``before``, oldest first."""
    if limit <= 0:
        return []
    query = _LATEST if before is None else _LATEST.where(M.c.seq < before)
    params = project.params(agent_id=agent_id, limit=limit)
    rows = conn.execute(query, params).all()
    return [_message(row) for row in reversed(rows)]


def take_queued(
    agent_id: str, run_id: str, history: int, project: Project, conn: Connection
) -> TakenMessages:
    """Give the agent's pending messages to ``run_id`` (with those it was given before: a run
    started again); them and the conversation before them."""
    pending = (M.c.agent_id == agent_id, M.c.direction == "user_to_agent", M.c.status == "pending")
    conn.execute(project.update(M, *pending).values(status="delivered", run_id=run_id))
    query = sa.select(*_MESSAGE, M.c.seq).where(
        project.rows(
            M, M.c.agent_id == agent_id, M.c.run_id == run_id, M.c.direction == "user_to_agent"
        )
    )
    rows = conn.execute(query.order_by(M.c.seq)).all()
    first = rows[0].seq if rows else None
    return TakenMessages(
        [_message(row) for row in rows], _history(agent_id, first, history, project, conn)
    )


def _end_turn(agent_id: str, end: TurnEnd, project: Project, conn: Connection) -> None:
    if _row(agent_id, project, conn) is None:
        return  # deleted while it ran: nothing of it is kept
    if end.reply is not None:
        _add_message(end.reply, project, conn)
    values: dict[str, Any] = {
        "input_tokens": A.c.input_tokens + end.input_tokens,
        "output_tokens": A.c.output_tokens + end.output_tokens,
        "last_activity_at": end.at,
    }
    if end.status is not None:
        values["status"] = end.status
    if end.run_id is not None:
        values.update(total_runs=A.c.total_runs + 1, last_run_at=end.at)
        _end_run(end, project, conn)
    conn.execute(project.update(A, A.c.id == agent_id).values(**values))


def _end_run(end: TurnEnd, project: Project, conn: Connection) -> None:
    runs = schema.managed_agent_runs
    values = {
        "status": end.run_status,
        "error": end.run_error,
        "reply_id": None if end.reply is None else end.reply.id,
        "input_tokens": end.input_tokens,
        "output_tokens": end.output_tokens,
        "ended_at": end.at,
    }
    conn.execute(project.update(runs, runs.c.id == end.run_id).values(**values))


def _messages(
    agent_id: str, after: str | None, limit: int, order: Order, project: Project, conn: Connection
) -> Page[MessageRow] | None:
    owned = project.rows(M, M.c.agent_id == agent_id)
    cursor = None
    if after is not None:
        cursor = conn.scalar(sa.select(M.c.seq).where(owned, M.c.id == after))
        if cursor is None:
            return None
    query = sa.select(*_MESSAGE).where(owned)
    return keyset_page(conn, query, M.c.seq, order=order, limit=limit, row=_message, after=cursor)
