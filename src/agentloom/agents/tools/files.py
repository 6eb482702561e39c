"""``file_read``: read a text file inside the agent's workspace, and nothing outside it.

The path is resolved (symlinks included) before it is checked, so ``../``, absolute paths and
symlinks leading out of the workspace are all refused. Files over ``max_bytes`` and binary
files are refused; ``offset`` (1-based line) and ``limit`` (lines) read a window of a long file.
The workspace is the run's ``AgentContext.workspace`` when it has one, else the tool's own.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentloom.agents.base import AgentContext
from agentloom.agents.tools.base import Tool, ToolError
from agentloom.json_types import JSONObject

__all__ = ["FileReadTool"]

DEFAULT_LIMIT = 400
MAX_BYTES = 1024 * 1024


class FileReadTool(Tool):
    name = "file_read"
    description = (
        "Read a text file from the workspace. `path` is relative to the workspace; `offset` "
        "is the first line to read (1-based) and `limit` how many lines."
    )
    parameters: JSONObject = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file, relative to the workspace."},
            "offset": {"type": "integer", "minimum": 1, "default": 1},
            "limit": {"type": "integer", "minimum": 1, "default": DEFAULT_LIMIT},
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    def __init__(self, workspace: Path, *, max_bytes: int = MAX_BYTES) -> None:
        self.workspace = workspace
        self.max_bytes = max_bytes

    async def call(self, arguments: JSONObject, context: AgentContext) -> str:
        path = arguments.get("path")
        if not isinstance(path, str) or not path.strip():
            raise ToolError("path must be a non-empty string")
        offset = _positive(arguments, "offset", 1)
        limit = _positive(arguments, "limit", DEFAULT_LIMIT)
        workspace = context.workspace or self.workspace
        return await asyncio.to_thread(self._read, workspace, path, offset, limit)

    def _read(self, workspace: Path, name: str, offset: int, limit: int) -> str:
        target = confined(workspace, name)
        if target.is_dir():
            entries = sorted(p.name + ("/" if p.is_dir() else "") for p in target.iterdir())
            raise ToolError(f"{name} is a directory; it contains: {', '.join(entries[:50])}")
        size = target.stat().st_size
        if size > self.max_bytes:
            raise ToolError(f"{name} is {size} bytes; the limit is {self.max_bytes}")
        data = target.read_bytes()
        if b"\0" in data:
            raise ToolError(f"{name} is a binary file")
        return _window(data.decode("utf-8", errors="replace"), offset, limit)


def confined(workspace: Path, name: str) -> Path:
    """``name`` resolved inside ``workspace``; :class:`ToolError` if it leads outside or is
    missing."""
    root = workspace.resolve()
    try:
        target = (root / name).resolve(strict=True)
    except FileNotFoundError:
        raise ToolError(f"no such file in the workspace: {name}") from None
    except (OSError, RuntimeError) as exc:  # a symlink loop, a name too long ...
        raise ToolError(f"cannot open {name}: {exc}") from None
    if not target.is_relative_to(root):
        raise ToolError(f"{name} is outside the workspace; only files inside it can be read")
    return target


def _window(text: str, offset: int, limit: int) -> str:
    lines = text.splitlines(keepends=True)
    if offset > max(len(lines), 1):
        raise ToolError(f"offset {offset} is past the end of the file ({len(lines)} lines)")
    chosen = lines[offset - 1 : offset - 1 + limit]
    body = "".join(chosen)
    last = offset - 1 + len(chosen)
    if last < len(lines):
        more = f"[lines {offset}-{last} of {len(lines)}; read on with offset={last + 1}]"
        body += ("" if body.endswith("\n") else "\n") + more
    return body


def _positive(arguments: JSONObject, key: str, default: int) -> int:
    value = arguments.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ToolError(f"{key} must be a positive integer")
    return value
