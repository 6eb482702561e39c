"""``think``: a scratchpad. The model writes a thought down; nothing else happens.

Giving a model a no-op tool to reason in helps on long tool chains (Anthropic's "think" tool);
the thoughts are kept on the tool, in order, for whoever wants to show them.
"""

from __future__ import annotations

from agentloom.agents.base import AgentContext
from agentloom.agents.tools.base import Tool, ToolError
from agentloom.json_types import JSONObject

__all__ = ["ThinkTool"]


class ThinkTool(Tool):
    name = "think"
    description = (
        "Think about something: write down reasoning, a plan or a check of what you have so "
        "far. It changes nothing and fetches nothing; it only records the thought."
    )
    parameters: JSONObject = {
        "type": "object",
        "properties": {"thought": {"type": "string", "description": "The thought to record."}},
        "required": ["thought"],
        "additionalProperties": False,
    }

    def __init__(self) -> None:
        self.thoughts: list[str] = []

    async def call(self, arguments: JSONObject, context: AgentContext) -> str:
        thought = arguments.get("thought")
        if not isinstance(thought, str) or not thought.strip():
            raise ToolError("thought must be a non-empty string")
        self.thoughts.append(thought)
        return "ok"
