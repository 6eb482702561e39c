"""A managed agent's task list (OpenJarvis's tasks): each task a project's row."""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.frozen import field_names, frozen
from agentloom.storage import schema
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import Project, ProjectRunner

T = schema.managed_agent_tasks
MAX_TASKS = 1000  # listed at once


@frozen
class TaskRow:
    id: str
    agent_id: str
    description: str
    status: str
    progress: str  # a JSON object
    findings: str  # a JSON list
    created_at: float
    updated_at: float


_COLUMNS = tuple(T.c[name] for name in field_names(TaskRow))


class SqlAgentTaskStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = ProjectRunner(runner)

    async def create(self, row: TaskRow) -> None:
        await self._runner.write(partial(_create, row))

    async def get(self, agent_id: str, task_id: str) -> TaskRow | None:
        return await self._runner.read(partial(_get, agent_id, task_id))

    async def list(self, agent_id: str, status: str | None) -> list[TaskRow]:
        """The agent's tasks (those of ``status`` if given), newest first."""
        return await self._runner.read(partial(_list, agent_id, status))

    async def update(self, agent_id: str, task_id: str, values: dict[str, Any]) -> TaskRow | None:
        write = partial(_update, agent_id, task_id, values)
        return await self._runner.write(write)

    async def delete(self, agent_id: str, task_id: str) -> bool:
        return await self._runner.write(partial(_delete, agent_id, task_id))


def _row(row: Any) -> TaskRow:
    return TaskRow(*(getattr(row, c.name) for c in _COLUMNS))


def _mine(project: Project, agent_id: str, task_id: str) -> sa.ColumnElement[bool]:
    return project.rows(T, T.c.id == task_id, T.c.agent_id == agent_id)


def _create(row: TaskRow, project: Project, conn: Connection) -> None:
    conn.execute(project.insert(T).values(**asdict(row)))


def _get(agent_id: str, task_id: str, project: Project, conn: Connection) -> TaskRow | None:
    row = conn.execute(sa.select(*_COLUMNS).where(_mine(project, agent_id, task_id))).first()
    return None if row is None else _row(row)


def _list(agent_id: str, status: str | None, project: Project, conn: Connection) -> list[TaskRow]:
    query = sa.select(*_COLUMNS).where(project.rows(T, T.c.agent_id == agent_id))
    if status is not None:
        query = query.where(T.c.status == status)
    rows = conn.execute(query.order_by(T.c.seq.desc()).limit(MAX_TASKS))
    return [_row(row) for row in rows]


def _update(
    agent_id: str, task_id: str, values: dict[str, Any], project: Project, conn: Connection
) -> TaskRow | None:
    if values:
        conn.execute(T.update().where(_mine(project, agent_id, task_id)).values(**values))
    return _get(agent_id, task_id, project, conn)


def _delete(agent_id: str, task_id: str, project: Project, conn: Connection) -> bool:
    return conn.execute(T.delete().where(_mine(project, agent_id, task_id))).rowcount > 0
