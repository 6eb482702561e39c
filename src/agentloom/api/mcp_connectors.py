"""``/v1/mcp_connectors`` (agentloom extensions): the MCP servers a project configures once, by
id, for ``mcp`` tools that name them with ``connector_id``. The credentials (``headers``,
``authorization``) are sealed at rest and never sent back."""

from __future__ import annotations

from typing import Literal, TypeAlias

from pydantic import Field

from agentloom.api.wire import Nullable, WireModel

ConnectorId: TypeAlias = Literal[
    "connector_dropbox",
    "connector_gmail",
    "connector_googlecalendar",
    "connector_googledrive",
    "connector_microsoftteams",
    "connector_outlookcalendar",
    "connector_outlookemail",
    "connector_sharepoint",
]
"""The connector ids an ``mcp`` tool may name: OpenAI's (its SDKs accept these only); a project
points each it uses at an MCP server of its choice."""


class McpConnectorRequest(WireModel):
    id: ConnectorId
    server_url: str = Field(min_length=1, max_length=2048)
    description: str | None = Field(default=None, max_length=1024)
    headers: dict[str, str] | None = Field(default=None, exclude=True)
    authorization: str | None = Field(default=None, exclude=True)


class McpConnector(WireModel):
    object: Literal["mcp_connector"] = "mcp_connector"
    id: str
    created_at: int
    server_url: str
    description: Nullable[str] = None
    header_names: list[str] = Field(
        default_factory=list, description="The names of its headers (their values are not shown)."
    )
    has_authorization: bool = False


class McpConnectorDeleted(WireModel):
    object: Literal["mcp_connector.deleted"] = "mcp_connector.deleted"
    id: str
    deleted: bool = True
