"""MCP connectors: servers a project configured once (``/v1/mcp_connectors``), which an ``mcp``
tool names by ``connector_id`` instead of giving ``server_url`` and credentials. The lookup is
a seam (:class:`ConnectorLookup`) the server wires to the project's store."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from agentloom.frozen import frozen


@frozen
class ConnectorTarget:
    """Where a connector's server is, and the headers (credentials opened) it is sent."""

    server_url: str
    headers: Mapping[str, str]


class ConnectorLookup(Protocol):
    async def target(self, connector_id: str) -> ConnectorTarget | None:
        """The running project's connector ``connector_id``, or ``None``."""
        ...
