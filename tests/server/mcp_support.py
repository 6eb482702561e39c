"""A real MCP server from the ``mcp`` package, served over HTTP for the MCP tool's tests: both
transports (Streamable HTTP at ``/mcp``, HTTP+SSE at ``/sse``), recording request headers."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import BaseModel
from starlette.types import ASGIApp, Receive, Scope, Send

from agentloom.testing.serving import serve


class Point(BaseModel):
    x: int
    y: int


def build_server() -> MCPServer:
    server = MCPServer("agentloom-test")

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def explode() -> str:
        """Always fails."""
        raise ValueError("the fuse blew")

    @server.tool()
    def distance(origin: Point, target: Point) -> float:
        """Manhattan distance between two points."""
        return float(abs(origin.x - target.x) + abs(origin.y - target.y))

    @server.tool()
    def delete_everything() -> str:
        """Deletes everything (a tool that needs approval)."""
        return "deleted"

    return server


@dataclass
class Recorder:
    """Wraps an ASGI app and keeps the headers of every HTTP request."""

    app: ASGIApp
    headers: list[dict[str, str]] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)
    open: int = 0  # requests under way

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.headers.append({k.decode(): v.decode() for k, v in scope["headers"]})
            self.methods.append(scope["method"])
            self.open += 1
            try:
                await self.app(scope, receive, send)
            finally:
                self.open -= 1
            return
        await self.app(scope, receive, send)


@dataclass(frozen=True)
class McpServers:
    streamable_url: str
    sse_url: str
    recorder: Recorder


@contextmanager
def serving() -> Iterator[McpServers]:
    server = build_server()
    recorder = Recorder(server.streamable_http_app())
    with serve(recorder) as base, serve(build_server().sse_app()) as sse_base:
        yield McpServers(
            streamable_url=base.removesuffix("/v1") + "/mcp",
            sse_url=sse_base.removesuffix("/v1") + "/sse",
            recorder=recorder,
        )
