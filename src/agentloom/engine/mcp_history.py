"""How MCP items are shown to the model in later turns (and in compaction transcripts).

A listing shows nothing (its tools are offered again); a call is an assistant tool call and its
result; an approval request is a call that did not run; a denial is told as a user note."""

from __future__ import annotations

from typing import TypeAlias

from agentloom.api.items import McpApprovalRequest, McpApprovalResponse, McpCall, McpListTools
from agentloom.frozen import frozen
from agentloom.inference.base import ChatMessage, ToolCall

McpItem: TypeAlias = McpListTools | McpCall | McpApprovalRequest | McpApprovalResponse
MCP_ITEMS = (McpListTools, McpCall, McpApprovalRequest, McpApprovalResponse)
MCP_TYPES = ("mcp_list_tools", "mcp_call", "mcp_approval_request", "mcp_approval_response")


@frozen
class Rendered:
    call: ToolCall | None = None  # an assistant tool call
    message: ChatMessage | None = None  # the tool's answer, or a note


def render(item: McpItem) -> Rendered:
    if isinstance(item, McpCall):
        call = ToolCall(id=item.id, name=item.name, arguments=item.arguments)
        return Rendered(call, ChatMessage(role="tool", content=_result(item), tool_call_id=item.id))
    if isinstance(item, McpApprovalRequest):
        call = ToolCall(id=item.id, name=item.name, arguments=item.arguments)
        note = "Not run: this call waits for the user's approval."
        return Rendered(call, ChatMessage(role="tool", content=note, tool_call_id=item.id))
    if isinstance(item, McpApprovalResponse) and not item.approve:
        reason = f" Reason: {item.reason}" if item.reason else ""
        note = (
            f"(The user denied the tool call {item.approval_request_id}; it did not run.{reason})"
        )
        return Rendered(message=ChatMessage(role="user", content=note))
    return Rendered()


def _result(item: McpCall) -> str:
    if item.error is not None:
        why = item.error.message or _content_text(item.error.content)
        return f"Error: the MCP tool '{item.name}' failed: {why}"
    return item.output or ""


def _content_text(content: list[dict[str, object]] | None) -> str:
    return " ".join(str(part.get("text", "")) for part in content or []) or "unknown error"


def line(item: McpItem) -> str:
    """One transcript line (compaction)."""
    if isinstance(item, McpListTools):
        names = ", ".join(t.name for t in item.tools)
        return f"MCP TOOLS of {item.server_label}: {names or item.error}"
    if isinstance(item, McpCall):
        return f"MCP CALL {item.server_label}.{item.name} {item.arguments}: {_result(item)}"
    if isinstance(item, McpApprovalRequest):
        return f"MCP APPROVAL ASKED {item.server_label}.{item.name} {item.arguments}"
    verdict = "approved" if item.approve else "denied"
    return f"MCP APPROVAL {verdict} ({item.approval_request_id}) {item.reason or ''}".rstrip()
