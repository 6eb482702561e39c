"""Approvals of MCP calls: the calls a client approved (``mcp_approval_response``) that have
not run yet, matched to the tools of this response."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentloom.api.items import McpApprovalRequest, McpApprovalResponse, McpCall, StoredItem
from agentloom.frozen import frozen
from agentloom.tools.base import ServerTool
from agentloom.tools.mcp.toolset import McpServerTool


@frozen
class Approved:
    function: str  # the name the tool is offered under
    arguments: str
    request_id: str


def approved_calls(items: Sequence[StoredItem], tools: Mapping[str, ServerTool]) -> list[Approved]:
    requests = {i.id: i for i in items if isinstance(i, McpApprovalRequest)}
    ran = {i.approval_request_id for i in items if isinstance(i, McpCall)}
    approved: list[Approved] = []
    for item in items:
        if not isinstance(item, McpApprovalResponse) or not item.approve:
            continue
        request = requests.get(item.approval_request_id)
        if request is None or request.id in ran:
            continue
        function = _function(request, tools)
        if function is not None:
            approved.append(Approved(function, request.arguments, request.id))
            ran.add(request.id)
    return approved


def _function(request: McpApprovalRequest, tools: Mapping[str, ServerTool]) -> str | None:
    for name, tool in tools.items():
        if (
            isinstance(tool, McpServerTool)
            and tool.config.server_label == request.server_label
            and tool.tool.name == request.name
        ):
            return name
    return None
