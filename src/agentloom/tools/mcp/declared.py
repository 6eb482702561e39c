"""MCP servers declared in the configuration (``[[mcp.servers]]``), which a request names by
``server_label``: the request's tool merged with the declared server's defaults.

- ``server_url``: omitted, or equal to the declared URL (a 400 otherwise; stdio servers take
  none). Declared URLs skip the per-request URL policy: the operator chose them.
- ``headers``: the declared ones, with the request's added over them (by name, any case).
- ``authorization``: the request's if given, else the token in ``authorization_env``.
- ``allowed_tools``: the declared list bounds the request's (a tool must pass both).
- ``require_approval``, ``server_description``: the request's if given, else the declared.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence

from agentloom.api.items import McpListedTool
from agentloom.api.tools import McpTool
from agentloom.config import McpServerSettings
from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.tools.mcp import rules

log = logging.getLogger(__name__)


@frozen
class McpServer:
    """What a request's ``mcp`` tool resolves to."""

    config: McpTool  # the request's tool, the declared defaults filled in
    declared: McpServerSettings | None = None

    def allows(self, tool: McpListedTool) -> bool:
        ceiling = self.declared.allowed_tools if self.declared is not None else None
        return rules.allowed(self.config, tool) and (ceiling is None or tool.name in ceiling)


def declared_servers(servers: Sequence[McpServerSettings]) -> dict[str, McpServerSettings]:
    return {server.label: server for server in servers}


def resolve(
    tool: McpTool,
    servers: Mapping[str, McpServerSettings],
    *,
    param: str,
    env: Mapping[str, str] | None = None,
) -> McpServer:
    """Raise InvalidRequestError (naming ``param``'s field) for an unknown label or a
    declared label pointed elsewhere."""
    declared = servers.get(tool.server_label)
    if declared is None:
        if tool.server_url is None:
            raise InvalidRequestError(
                f"No MCP server is declared with server_label '{tool.server_label}' on this "
                "server; give server_url, or the label of a declared server.",
                param=f"{param}.server_label",
                code="invalid_value",
            )
        return McpServer(tool)
    if tool.server_url is not None and tool.server_url != declared.url:
        raise InvalidRequestError(
            f"server_label '{tool.server_label}' names an MCP server declared by this server: "
            "omit server_url (or give its declared URL).",
            param=f"{param}.server_url",
            code="invalid_value",
        )
    return McpServer(_merged(tool, declared, os.environ if env is None else env), declared)


def _merged(tool: McpTool, declared: McpServerSettings, env: Mapping[str, str]) -> McpTool:
    asked = tool.headers or {}
    names = {name.lower() for name in asked}
    headers = {k: v for k, v in declared.headers.items() if k.lower() not in names} | asked
    approval = tool.require_approval
    return tool.model_copy(
        update={
            "server_description": tool.server_description or declared.description,
            "require_approval": approval if approval is not None else declared.require_approval,
            "headers": headers,
            "authorization": tool.authorization or _token(declared, env),
        }
    )


def _token(declared: McpServerSettings, env: Mapping[str, str]) -> str | None:
    if declared.authorization_env is None:
        return None
    token = env.get(declared.authorization_env)
    if not token:
        log.warning(
            "MCP server %s: %s is not set; connecting without authorization",
            declared.label,
            declared.authorization_env,
        )
    return token or None
