"""A project's MCP connectors: configured (their credentials sealed, purpose
``mcp_connector``, bound to the project), listed and read without their credentials, deleted,
and opened for the ``mcp`` tools that name them (:class:`ConnectorLookup`)."""

from __future__ import annotations

import json
import time

from agentloom.api.mcp_connectors import McpConnector, McpConnectorDeleted, McpConnectorRequest
from agentloom.errors import NotFoundError
from agentloom.sealing import Sealer
from agentloom.storage.mcp_connectors import McpConnectorRow, SqlMcpConnectorStore
from agentloom.tools.mcp.connectors import ConnectorTarget

PURPOSE = "mcp_connector"


class McpConnectors:
    def __init__(self, store: SqlMcpConnectorStore, sealer: Sealer) -> None:
        self._store = store
        self._sealer = sealer

    async def configure(self, body: McpConnectorRequest) -> McpConnector:
        headers = dict(body.headers or {})
        if body.authorization:
            headers["Authorization"] = f"Bearer {body.authorization}"
        sealed = self._sealer.seal(PURPOSE, json.dumps(headers).encode())
        row = McpConnectorRow(body.id, time.time(), body.server_url, body.description, sealed)
        await self._store.put(row)
        return self._shown(row, headers)

    async def list(self) -> list[McpConnector]:
        return [self._shown(row, self._headers(row)) for row in await self._store.list()]

    async def get(self, connector_id: str) -> McpConnector:
        row = await self._found(connector_id)
        return self._shown(row, self._headers(row))

    async def delete(self, connector_id: str) -> McpConnectorDeleted:
        if not await self._store.delete(connector_id):
            raise _not_found(connector_id)
        return McpConnectorDeleted(id=connector_id)

    async def target(self, connector_id: str) -> ConnectorTarget | None:
        row = await self._store.get(connector_id)
        if row is None:
            return None
        return ConnectorTarget(row.server_url, self._headers(row))

    async def _found(self, connector_id: str) -> McpConnectorRow:
        row = await self._store.get(connector_id)
        if row is None:
            raise _not_found(connector_id)
        return row

    def _headers(self, row: McpConnectorRow) -> dict[str, str]:
        opened: dict[str, str] = json.loads(self._sealer.open(PURPOSE, row.credentials))
        return opened

    @staticmethod
    def _shown(row: McpConnectorRow, headers: dict[str, str]) -> McpConnector:
        names = sorted(name for name in headers if name.lower() != "authorization")
        return McpConnector(
            id=row.id,
            created_at=int(row.created_at),
            server_url=row.server_url,
            description=row.description,
            header_names=names,
            has_authorization=any(name.lower() == "authorization" for name in headers),
        )


def _not_found(connector_id: str) -> NotFoundError:
    return NotFoundError(f"No MCP connector found with id '{connector_id}'.", param="connector_id")
