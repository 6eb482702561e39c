"""``memory_store`` / ``memory_search``: notes an agent keeps across runs and processes.

Both tools use a :class:`~agentloom.agents.memory.MemoryStore` (the SQLite file ``memory.db``
in the data directory, when built by name; closed with the tool) and the run's session as
namespace: ``AgentContext.session_id`` when the run has one, else the session the tools were
built for.
"""

from __future__ import annotations

import time
from typing import Self

from agentloom.agents.base import AgentContext
from agentloom.agents.memory import MemoryHit, MemoryStore
from agentloom.agents.tools.base import Tool, ToolEnvironment, ToolError
from agentloom.json_types import JSONObject

__all__ = ["MemorySearchTool", "MemoryStoreTool"]

MAX_NOTE = 8000


class _MemoryTool(Tool):
    def __init__(self, store: MemoryStore, session_id: str = "default") -> None:
        self.store = store
        self.session_id = session_id

    @classmethod
    def for_environment(cls, environment: ToolEnvironment) -> Self:
        store = environment.memory or MemoryStore(environment.data_dir / "memory.db")
        return cls(store, environment.session_id)

    def namespace(self, context: AgentContext) -> str:
        return context.session_id or self.session_id

    async def aclose(self) -> None:
        await self.store.aclose()


class MemoryStoreTool(_MemoryTool):
    name = "memory_store"
    description = (
        "Remember a note (a fact, a preference, a result, a plan) for later runs of this "
        "session. Write it so it makes sense on its own."
    )
    parameters: JSONObject = {
        "type": "object",
        "properties": {"content": {"type": "string", "description": "The note to remember."}},
        "required": ["content"],
        "additionalProperties": False,
    }

    async def call(self, arguments: JSONObject, context: AgentContext) -> str:
        content = arguments.get("content")
        if not isinstance(content, str) or not content.strip():
            raise ToolError("content must be a non-empty string")
        if len(content) > MAX_NOTE:
            raise ToolError(f"a note is limited to {MAX_NOTE} characters; split it")
        memory = await self.store.store(self.namespace(context), content.strip())
        return f"remembered (memory {memory.id})"


class MemorySearchTool(_MemoryTool):
    name = "memory_search"
    description = (
        "Search the notes remembered in this session by keywords; an empty query lists the "
        "most recent notes."
    )
    parameters: JSONObject = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Keywords to look for."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5},
        },
        "required": ["query"],
        "additionalProperties": False,
    }

    async def call(self, arguments: JSONObject, context: AgentContext) -> str:
        query = arguments.get("query", "")
        limit = arguments.get("limit", 5)
        if not isinstance(query, str):
            raise ToolError("query must be a string")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 50:
            raise ToolError("limit must be an integer from 1 to 50")
        hits = await self.store.search(self.namespace(context), query, limit)
        if not hits:
            return "no remembered notes match" if query.strip() else "no notes remembered yet"
        return "\n".join(_line(hit) for hit in hits)


def _line(hit: MemoryHit) -> str:
    saved = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(hit.memory.created_at))
    return f"- [{saved}] {hit.memory.content}"
