"""``allowed_tools`` and ``require_approval`` of an ``mcp`` tool, applied to a listed tool."""

from __future__ import annotations

from agentloom.api.items import McpListedTool
from agentloom.api.tools import McpApprovalFilter, McpTool, McpToolFilter


def read_only(tool: McpListedTool) -> bool:
    return bool((tool.annotations or {}).get("readOnlyHint", False))


def matches(rule: McpToolFilter | None, tool: McpListedTool) -> bool:
    if rule is None:
        return False
    if rule.tool_names is not None and tool.name in rule.tool_names:
        return True
    return rule.read_only is not None and rule.read_only == read_only(tool)


def allowed(config: McpTool, tool: McpListedTool) -> bool:
    rule = config.allowed_tools
    if rule is None:
        return True
    if isinstance(rule, list):
        return tool.name in rule
    return matches(rule, tool)


def needs_approval(config: McpTool, tool: McpListedTool) -> bool:
    """As OpenAI: every call needs approval unless ``never`` says otherwise."""
    rule = config.require_approval
    if rule is None or rule == "always":
        return True
    if rule == "never":
        return False
    assert isinstance(rule, McpApprovalFilter)
    return not matches(rule.never, tool)  # ``always`` names or not: approval needed
