"""The store of a project's MCP connectors: one row each, its credentials sealed by the caller
(:mod:`agentloom.services.mcp_connectors`). Configuring an id again replaces it."""

from __future__ import annotations

from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.frozen import frozen
from agentloom.storage import schema
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import Project, ProjectRunner

C = schema.mcp_connectors
_COLUMNS = (C.c.id, C.c.created_at, C.c.server_url, C.c.description, C.c.credentials)


@frozen
class McpConnectorRow:
    id: str
    created_at: float
    server_url: str
    description: str | None
    credentials: str  # sealed


class SqlMcpConnectorStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = ProjectRunner(runner)

    async def put(self, row: McpConnectorRow) -> None:
        await self._runner.write(partial(_put, row))

    async def get(self, connector_id: str) -> McpConnectorRow | None:
        return await self._runner.read(partial(_get, connector_id))

    async def list(self) -> list[McpConnectorRow]:
        return await self._runner.read(_list)

    async def delete(self, connector_id: str) -> bool:
        return await self._runner.write_statement(partial(_delete, connector_id))


def _put(row: McpConnectorRow, project: Project, conn: Connection) -> None:
    conn.execute(project.delete(C, C.c.id == row.id))
    conn.execute(project.insert(C).values(**{c.name: getattr(row, c.name) for c in _COLUMNS}))


def _get(connector_id: str, project: Project, conn: Connection) -> McpConnectorRow | None:
    found = conn.execute(sa.select(*_COLUMNS).where(project.rows(C, C.c.id == connector_id)))
    row = found.first()
    return None if row is None else _row(row)


def _list(project: Project, conn: Connection) -> list[McpConnectorRow]:
    rows = conn.execute(sa.select(*_COLUMNS).where(project.rows(C)).order_by(C.c.seq))
    return [_row(row) for row in rows]


def _delete(connector_id: str, project: Project, conn: Connection) -> bool:
    return bool(conn.execute(project.delete(C, C.c.id == connector_id)).rowcount)


def _row(row: Any) -> McpConnectorRow:
    return McpConnectorRow(
        id=row.id,
        created_at=row.created_at,
        server_url=row.server_url,
        description=row.description,
        credentials=row.credentials,
    )
