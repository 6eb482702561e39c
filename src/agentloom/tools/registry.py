"""Which server tool runs each hosted tool type of a request: one table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agentloom.api.tools import FileSearchTool, HostedTool
from agentloom.errors import InvalidRequestError
from agentloom.tools.base import ServerTool
from agentloom.tools.file_search import FileSearch, Searcher

FILE_SEARCH_RESULTS = "file_search_call.results"


@dataclass(frozen=True, slots=True)
class ToolServices:
    """What server tools need from the running server (``None``: not available here)."""

    searcher: Searcher | None = None


@dataclass(frozen=True, slots=True)
class ToolRequest:
    """A hosted tool as a request gives it, with what the request says around it."""

    tool: FileSearchTool | HostedTool
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


_BUILDERS: dict[str, Callable[[ToolRequest, ToolServices], ServerTool]] = {
    "file_search": _file_search,
}


def build_server_tool(request: ToolRequest, services: ToolServices) -> ServerTool:
    builder = _BUILDERS.get(request.tool.type)
    if builder is None:
        raise InvalidRequestError(
            f"Tool type '{request.tool.type}' is not supported by this server yet; "
            f"supported: function, {', '.join(sorted(_BUILDERS))}.",
            param=f"{request.param}.type",
            code="unsupported_tool_type",
        )
    return builder(request, services)
