"""An ``mcp`` tool of a request: a toolset listed from the server (or reused from an earlier
listing), and one server tool per listed MCP tool, called over the response's connection."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING

from agentloom.api import events as ev
from agentloom.api.items import (
    McpApprovalRequest,
    McpCall,
    McpCallError,
    McpListedTool,
    McpListTools,
    StoredItem,
)
from agentloom.api.tools import McpTool
from agentloom.config import McpServerSettings
from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.inference import base as inf
from agentloom.tools.base import (
    Listed,
    ServerTool,
    ToolCallContext,
    ToolResult,
    ToolsetContext,
    ToolsetStep,
    ToolStep,
)
from agentloom.tools.mcp import rules
from agentloom.tools.mcp.client import Connection, McpFailure, ServerAddress
from agentloom.tools.mcp.connectors import ConnectorLookup
from agentloom.tools.mcp.declared import McpServer, resolve
from agentloom.tools.mcp.policy import UrlPolicy
from agentloom.tools.mcp.schema import normalise
from agentloom.tools.mcp.stdio import StdioAddress

if TYPE_CHECKING:
    import mcp_types


@frozen
class McpLimits:
    connect_timeout: float = 10.0
    call_timeout: float = 60.0


@frozen
class McpToolset:
    config: McpTool
    policy: UrlPolicy
    limits: McpLimits
    param: str = "tools[0]"
    servers: Mapping[str, McpServerSettings] = field(default_factory=dict)  # declared, by label
    connectors: ConnectorLookup | None = None  # the project's (``connector_id``)

    @property
    def kind(self) -> str:
        return "mcp"

    async def check(self) -> None:
        server = await self._server()
        if server.declared is None:  # declared servers were chosen by the operator
            assert server.config.server_url is not None  # resolve() checked
            await self.policy.check(server.config.server_url, param=f"{self.param}.server_url")

    async def open(self, context: ToolsetContext) -> AsyncIterator[ToolsetStep]:
        server = await self._server()
        connection = Connection(self._address(server), context.stack)
        label = server.config.server_label
        earlier = earlier_listing(context.earlier, label)
        if earlier is not None:
            yield Listed(None, self._tools(server, earlier.tools, connection), label)
            return
        where = _where(context)
        item = McpListTools(id=context.item_id, server_label=label)
        yield ev.OutputItemAdded(sequence_number=context.seq(), item=item, **where)
        yield ev.McpListToolsInProgress(sequence_number=context.seq(), **where)
        try:
            listed = [_listed(tool) for tool in await connection.list_tools()]
        except McpFailure as failure:
            item = item.model_copy(update={"error": failure.message})
            yield ev.McpListToolsFailed(sequence_number=context.seq(), **where)
        else:
            listed = [tool for tool in listed if server.allows(tool)]
            item = item.model_copy(update={"tools": listed})
            yield ev.McpListToolsCompleted(sequence_number=context.seq(), **where)
        yield ev.OutputItemDone(sequence_number=context.seq(), item=item, **where)
        yield Listed(item, self._tools(server, item.tools, connection), label)

    async def _server(self) -> McpServer:
        config = self.config
        if config.connector_id is not None:
            config = await self._connected(config.connector_id)
        return resolve(config, self.servers, param=self.param)

    async def _connected(self, connector_id: str) -> McpTool:
        """The tool pointed at the project's connector: its URL, its headers under the
        request's own."""
        where = f"{self.param}.connector_id"
        if self.config.server_url is not None:
            raise InvalidRequestError(
                "Give connector_id or server_url, not both.", param=where, code="invalid_value"
            )
        found = await self.connectors.target(connector_id) if self.connectors else None
        if found is None:
            raise InvalidRequestError(
                f"No MCP connector '{connector_id}' is configured for this project "
                "(POST /v1/mcp_connectors).",
                param=where,
                code="invalid_value",
            )
        headers = {**found.headers, **(self.config.headers or {})}
        update = {"server_url": found.server_url, "headers": headers}
        return self.config.model_copy(update=update)

    def _address(self, server: McpServer) -> ServerAddress | StdioAddress:
        config, declared, limits = server.config, server.declared, self.limits
        if declared is not None and declared.command is not None:
            return StdioAddress(
                declared.label,
                declared.command,
                tuple(declared.args),
                declared.env,
                declared.cwd,
                limits.connect_timeout,
                limits.call_timeout,
            )
        headers = dict(config.headers or {})
        if config.authorization:
            headers["Authorization"] = f"Bearer {config.authorization}"
        url = declared.url if declared is not None else config.server_url
        assert url is not None  # resolve() checked
        return ServerAddress(url, headers, limits.connect_timeout, limits.call_timeout)

    def _tools(
        self, server: McpServer, listed: Sequence[McpListedTool], connection: Connection
    ) -> tuple[ServerTool, ...]:
        return tuple(
            McpServerTool(server.config, tool, connection) for tool in listed if server.allows(tool)
        )


def earlier_listing(items: Sequence[StoredItem], label: str) -> McpListTools | None:
    """The latest successful listing of server ``label`` among ``items``."""
    for item in reversed(items):
        if isinstance(item, McpListTools) and item.server_label == label and item.error is None:
            return item
    return None


@frozen
class McpServerTool:
    """One tool of an MCP server, offered to the model as a function."""

    config: McpTool
    tool: McpListedTool
    connection: Connection

    @property
    def kind(self) -> str:
        return "mcp"

    @property
    def item_prefix(self) -> str:
        return McpCall.ID_PREFIX

    @property
    def spec(self) -> inf.FunctionSpec:
        parameters, _ = normalise(self.tool.input_schema)
        description = self.tool.description or ""
        if self.config.server_description:
            description = f"{description}\n(MCP server: {self.config.server_description})"
        return inf.FunctionSpec(
            name=self.tool.name, description=description.strip() or None, parameters=parameters
        )

    async def check(self) -> None:
        return None

    def item(self, context: ToolCallContext, arguments: str) -> McpCall | McpApprovalRequest:
        label, name = self.config.server_label, self.tool.name
        if self._awaits_approval(context):
            return McpApprovalRequest(
                id=context.item_id, server_label=label, name=name, arguments=arguments
            )
        return McpCall(
            id=context.item_id,
            server_label=label,
            name=name,
            arguments=arguments,
            status="in_progress",
            approval_request_id=context.approval_request_id,
        )

    def _awaits_approval(self, context: ToolCallContext) -> bool:
        return context.approval_request_id is None and rules.needs_approval(self.config, self.tool)

    async def run(self, context: ToolCallContext, arguments: str) -> AsyncIterator[ToolStep]:
        item = self.item(context, arguments)
        if isinstance(item, McpApprovalRequest):
            yield ToolResult(
                item=item, output="(Waiting for the user's approval.)", awaits_client=True
            )
            return
        where = _where(context)
        yield ev.McpCallArgumentsDelta(sequence_number=context.seq(), delta=arguments, **where)
        yield ev.McpCallArgumentsDone(sequence_number=context.seq(), arguments=arguments, **where)
        yield ev.McpCallInProgress(sequence_number=context.seq(), **where)
        parsed = _arguments(arguments)
        if isinstance(parsed, McpCallError):
            yield ev.McpCallFailed(sequence_number=context.seq(), **where)
            yield self._failed(item, parsed)
            return
        try:
            result = await self.connection.call(self.tool.name, parsed)
        except McpFailure as failure:
            error = McpCallError(type=failure.kind, code=failure.code, message=failure.message)
            yield ev.McpCallFailed(sequence_number=context.seq(), **where)
            yield self._failed(item, error)
            return
        if result.is_error:
            content = [part.model_dump(mode="json", exclude_none=True) for part in result.content]
            error = McpCallError(type="mcp_tool_execution_error", content=content)
            yield ev.McpCallFailed(sequence_number=context.seq(), **where)
            yield self._failed(item, error, detail=_text(result))
            return
        output = _text(result)
        yield ev.McpCallCompleted(sequence_number=context.seq(), **where)
        done = item.model_copy(update={"status": "completed", "output": output})
        yield ToolResult(item=done, output=output)

    def _failed(self, item: McpCall, error: McpCallError, *, detail: str = "") -> ToolResult:
        done = item.model_copy(update={"status": "failed", "error": error})
        why = detail or error.message or "unknown error"
        return ToolResult(item=done, output=f"Error: the MCP tool '{self.tool.name}' failed: {why}")


def _where(context: ToolCallContext | ToolsetContext) -> dict[str, int | str]:
    return {"item_id": context.item_id, "output_index": context.output_index}


def _listed(tool: mcp_types.Tool) -> McpListedTool:
    annotations = (
        tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else None
    )
    return McpListedTool(
        name=tool.name,
        input_schema=dict(tool.input_schema),
        description=tool.description,
        annotations=annotations,
    )


def _arguments(arguments: str) -> dict[str, object] | McpCallError:
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        return McpCallError(
            type="mcp_protocol_error", code=-32602, message="the arguments are not a JSON object"
        )
    return value


def _text(result: mcp_types.CallToolResult) -> str:
    from mcp_types import TextContent

    texts = [part.text for part in result.content if isinstance(part, TextContent)]
    if texts:
        return "\n".join(texts)
    if result.structured_content is not None:
        return json.dumps(result.structured_content)
    return ""
