"""Which server tool runs each hosted tool type of a request: one table."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any

from agentloom.api.tools import (
    ACCEPTED_TOOL_TYPES,
    WEB_SEARCH_TYPES,
    CodeInterpreterTool,
    FileSearchTool,
    HostedTool,
    McpTool,
    WebSearchTool,
)
from agentloom.config import McpServerSettings
from agentloom.errors import InvalidRequestError, PermissionDeniedError
from agentloom.frozen import frozen
from agentloom.tenancy import HOSTED_TOOLS, current_policy
from agentloom.tools import code_interpreter, file_search, web_search
from agentloom.tools.base import ServerTool, Toolset
from agentloom.tools.code_interpreter import OUTPUTS, CodeInterpreter, CodeRunner
from agentloom.tools.file_search import FileSearch, Searcher
from agentloom.tools.items import ToolItem
from agentloom.tools.mcp.connectors import ConnectorLookup
from agentloom.tools.mcp.policy import UrlPolicy
from agentloom.tools.mcp.toolset import McpLimits, McpToolset
from agentloom.tools.web import WebSearchSources
from agentloom.tools.web_search import WebSearch

FILE_SEARCH_RESULTS = "file_search_call.results"
WEB_SEARCH_SOURCES = "web_search_call.action.sources"


@frozen
class ToolServices:
    """What server tools need from the running server (``None``: not available here)."""

    searcher: Searcher | None = None
    web: WebSearchSources | None = None  # None: no web search provider (calls told so)
    mcp_policy: UrlPolicy = field(default_factory=UrlPolicy)  # which MCP URLs may be reached
    mcp_limits: McpLimits = field(default_factory=McpLimits)
    mcp_servers: Mapping[str, McpServerSettings] = field(default_factory=dict)  # by label
    mcp_connectors: ConnectorLookup | None = None  # the project's, by connector_id
    code: CodeRunner | None = None  # None: no code_interpreter here


@frozen
class ToolRequest:
    """A hosted tool as a request gives it, with what the request says around it."""

    tool: FileSearchTool | WebSearchTool | McpTool | CodeInterpreterTool | HostedTool
    param: str  # where it sits: tools[i]
    include: frozenset[str]


def _file_search(request: ToolRequest, services: ToolServices) -> ServerTool:
    assert isinstance(request.tool, FileSearchTool)
    if services.searcher is None:
        raise InvalidRequestError(
            "file_search is not available: this server runs without vector stores.",
            param=f"{request.param}.type",
        )
    return FileSearch(
        request.tool,
        services.searcher,
        include_results=FILE_SEARCH_RESULTS in request.include,
        param=request.param,
    )


def _web_search(request: ToolRequest, services: ToolServices) -> ServerTool:
    assert isinstance(request.tool, WebSearchTool)
    return WebSearch(
        request.tool,
        services.web or WebSearchSources(),
        include_sources=WEB_SEARCH_SOURCES in request.include,
        param=request.param,
    )


def _code_interpreter(request: ToolRequest, services: ToolServices) -> ServerTool:
    assert isinstance(request.tool, CodeInterpreterTool)
    if services.code is None:
        raise InvalidRequestError(
            "code_interpreter is not available on this server.", param=f"{request.param}.type"
        )
    return CodeInterpreter(
        request.tool, services.code, include_outputs=OUTPUTS in request.include, param=request.param
    )


_BUILDERS: dict[str, Callable[[ToolRequest, ToolServices], ServerTool]] = {
    "file_search": _file_search,
    "code_interpreter": _code_interpreter,
    **dict.fromkeys(WEB_SEARCH_TYPES, _web_search),
}


def permitted(request: ToolRequest) -> None:
    """Refuse a hosted tool the project's policy disables."""
    kind = "web_search" if request.tool.type in WEB_SEARCH_TYPES else request.tool.type
    if kind in HOSTED_TOOLS and not current_policy().allows_tool(kind):
        raise PermissionDeniedError(
            f"The {kind} tool is disabled for this project.",
            param=f"{request.param}.type",
            code="tool_not_permitted",
        )


def build_server_tool(request: ToolRequest, services: ToolServices) -> ServerTool:
    permitted(request)
    builder = _BUILDERS.get(request.tool.type)
    if builder is None:
        raise InvalidRequestError(
            f"Tool type '{request.tool.type}' is not supported by this server yet; "
            f"supported: {', '.join(sorted(ACCEPTED_TOOL_TYPES))}.",
            param=f"{request.param}.type",
            code="unsupported_tool_type",
        )
    return builder(request, services)


def _mcp(request: ToolRequest, services: ToolServices) -> Toolset:
    assert isinstance(request.tool, McpTool)
    return McpToolset(
        request.tool,
        services.mcp_policy,
        services.mcp_limits,
        param=request.param,
        servers=services.mcp_servers,
        connectors=services.mcp_connectors,
    )


TOOL_ITEMS: dict[str, ToolItem[Any]] = {
    item.type: item for item in (file_search.ITEM, web_search.ITEM, code_interpreter.ITEM)
}
"""The items server tools make, by ``type`` (MCP's four kinds, with their approvals, are
rendered by :mod:`agentloom.engine.mcp_history`)."""

_TOOLSETS: dict[str, Callable[[ToolRequest, ToolServices], Toolset]] = {"mcp": _mcp}
"""Hosted tool types whose tools are known only once listed (see :class:`Toolset`)."""


def is_toolset(kind: str) -> bool:
    return kind in _TOOLSETS


def build_toolset(request: ToolRequest, services: ToolServices) -> Toolset:
    permitted(request)
    return _TOOLSETS[request.tool.type](request, services)
