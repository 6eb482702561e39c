"""The simplest strategy: one model call, no tools."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from agentloom.agents.base import AgentContext, AgentEvent, AgentInput
from agentloom.agents.tool_agent import ToolUsingAgent
from agentloom.llm.client import LLM

__all__ = ["SimpleAgent"]


class SimpleAgent(ToolUsingAgent):
    """Sends the conversation to the model once and returns its answer."""

    name = "simple"
    description = "One model call, no tools."

    def __init__(self, llm: LLM, *, instructions: str | None = None) -> None:
        super().__init__(llm, (), instructions=instructions, max_turns=1)

    async def stream(
        self, input: AgentInput, context: AgentContext | None = None
    ) -> AsyncGenerator[AgentEvent, None]:
        run = self.start(input, context)
        async for event in self.model_turn(run, tools=()):
            yield event
        run.messages.append(run.reply.message)
        yield self.finish(run, run.reply.text)
