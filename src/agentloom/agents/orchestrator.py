"""The orchestrator: the function-calling loop, natively or in a structured text mode.

Native mode: each turn the model sees the tools as function tools; its tool calls run
concurrently, the assistant message (with its calls) and then one tool message per call, in
call order, are appended, and the model goes again, until it answers without calling a tool.

Structured mode (``mode="structured"``) is for models without native tool calling: the tools
are described in the system prompt and the model asks for one tool at a time in labelled lines
(see :mod:`agentloom.agents.structured`); results come back as ``OBSERVATION:`` user messages.

Either way the run stops after ``max_turns`` model turns (``stop_reason="max_turns"``), or
with ``"loop_guard"`` when the model repeats a call the loop guard blocked after being told.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from typing import Literal

from agentloom.agents.base import AgentContext, AgentEvent, AgentInput
from agentloom.agents.loop_guard import LoopGuard
from agentloom.agents.structured import (
    observation,
    parse_structured,
    structured_correction,
    structured_prompt,
)
from agentloom.agents.text_protocol import FinalAnswer, Malformed
from agentloom.agents.tool_agent import ToolUsingAgent
from agentloom.agents.tools.base import Tool
from agentloom.llm.client import LLM
from agentloom.llm.types import Message, MessageToolCall

__all__ = ["OrchestratorAgent", "OrchestratorMode"]

OrchestratorMode = Literal["native", "structured"]


class OrchestratorAgent(ToolUsingAgent):
    name = "orchestrator"
    description = "Function-calling loop: tools run (in parallel) until the model answers."

    def __init__(
        self,
        llm: LLM,
        tools: Sequence[Tool] = (),
        *,
        instructions: str | None = None,
        max_turns: int = 10,
        guard: LoopGuard | None = None,
        mode: OrchestratorMode = "native",
    ) -> None:
        super().__init__(llm, tools, instructions=instructions, max_turns=max_turns, guard=guard)
        self.mode: OrchestratorMode = mode

    def stream(
        self, input: AgentInput, context: AgentContext | None = None
    ) -> AsyncGenerator[AgentEvent, None]:
        if self.mode == "structured":
            return self._structured(input, context)
        return self._native(input, context)

    # --- native function calling -------------------------------------------------------------

    async def _native(
        self, input: AgentInput, context: AgentContext | None
    ) -> AsyncGenerator[AgentEvent, None]:
        run = self.start(input, context)
        while run.turns < self.max_turns:
            async for event in self.model_turn(run):
                yield event
            reply = run.reply
            run.messages.append(reply.message)
            if not reply.tool_calls:
                yield self.finish(run, reply.text)
                return
            async for event in self.run_tools(run, reply.tool_calls):
                yield event
            run.messages.extend(Message.tool(o.call_id, o.output, o.name) for o in run.outcomes)
            if run.loop_detected:
                yield self.unfinished(run, "loop_guard")
                return
        yield self.unfinished(run, "max_turns")

    # --- structured text mode ----------------------------------------------------------------

    async def _structured(
        self, input: AgentInput, context: AgentContext | None
    ) -> AsyncGenerator[AgentEvent, None]:
        system = structured_prompt(self.executor.specs, self.instructions)
        run = self.start(input, context, system=system)
        while run.turns < self.max_turns:
            async for event in self.model_turn(run, tools=()):
                yield event
            text = run.reply.text
            run.messages.append(Message.assistant(text))
            step = parse_structured(text)
            if isinstance(step, FinalAnswer):
                yield self.finish(run, step.answer)
                return
            if isinstance(step, Malformed):
                run.messages.append(Message.user(structured_correction(step.problem)))
                continue
            call = MessageToolCall(f"structured_{run.turns}", step.name, step.arguments)
            async for event in self.run_tools(run, [call]):
                yield event
            run.messages.append(Message.user(observation(run.outcomes[0].output)))
            if run.loop_detected:
                yield self.unfinished(run, "loop_guard", protocol=True)
                return
        yield self.unfinished(run, "max_turns", protocol=True)
