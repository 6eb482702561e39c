"""The base of every strategy that calls tools: one executor and the steps its loops share.

A strategy's ``stream`` is a loop over these steps::

    run = self.start(input, context)
    async for event in self.model_turn(run):          # TurnStarted, TextDelta, ReasoningDelta
        yield event
    reply = run.reply                                  # the LLMResponse of that turn
    async for event in self.run_tools(run, calls):    # ToolStarted ..., ToolFinished ...
        yield event
    outcomes = run.outcomes                            # in call order
    if run.loop_detected: ...                          # the model ignored the loop guard
    yield self.finish(run, content, "final")

:class:`AgentRun` carries the run's conversation, usage and tool results; a run's guard state
is reset by :meth:`ToolUsingAgent.start`, so an agent instance runs one conversation at a time.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field

from agentloom.agents.base import (
    AgentContext,
    AgentEvent,
    AgentFinished,
    AgentInput,
    AgentResult,
    AgentUsage,
    BaseAgent,
    ReasoningDelta,
    StopReason,
    TextDelta,
    ToolFinished,
    ToolOutcome,
    ToolStarted,
    TurnStarted,
    with_memory,
)
from agentloom.agents.executor import ToolExecutor
from agentloom.agents.loop_guard import LoopGuard
from agentloom.agents.tools.base import Tool
from agentloom.json_types import JSONValue
from agentloom.llm.client import LLM
from agentloom.llm.types import (
    FunctionTool,
    LLMCompleted,
    LLMResponse,
    Message,
    MessageToolCall,
    ReasoningDeltaEvent,
    TextDeltaEvent,
)

__all__ = ["AgentRun", "ToolUsingAgent"]


@dataclass
class AgentRun:
    """The state of one run: its conversation, what it cost, what its tools returned."""

    context: AgentContext
    messages: list[Message]
    usage: AgentUsage = field(default_factory=AgentUsage)
    turns: int = 0
    tool_results: list[ToolOutcome] = field(default_factory=list)
    last_reply: LLMResponse | None = None
    last_outcomes: list[ToolOutcome] = field(default_factory=list)
    last_text: str = ""  # the latest non-empty text the model wrote
    loop_detected: bool = False  # the model repeated a blocked call after being told

    @property
    def reply(self) -> LLMResponse:
        """The latest model turn's response."""
        if self.last_reply is None:
            raise RuntimeError("no model turn has run yet")
        return self.last_reply

    @property
    def outcomes(self) -> list[ToolOutcome]:
        """The latest tool batch's outcomes, in call order."""
        return self.last_outcomes


class ToolUsingAgent(BaseAgent):
    """An agent with tools (run by :attr:`executor`), a turn limit and a loop guard.

    ``guard`` defaults to a :class:`LoopGuard` with its default limits.
    """

    def __init__(
        self,
        llm: LLM,
        tools: Sequence[Tool] = (),
        *,
        instructions: str | None = None,
        max_turns: int = 10,
        guard: LoopGuard | None = None,
    ) -> None:
        super().__init__(llm, instructions=instructions)
        if max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        self.max_turns = max_turns
        self.executor = ToolExecutor(tools, guard if guard is not None else LoopGuard())

    # --- steps -------------------------------------------------------------------------------

    def start(
        self, input: AgentInput, context: AgentContext | None = None, *, system: str | None = None
    ) -> AgentRun:
        """A new run over ``input`` (``system`` replaces the instructions as system prompt)."""
        self.executor.reset()
        context = context or AgentContext()
        messages = with_memory(self.messages(input, system), context.memory_results)
        return AgentRun(context, messages)

    async def model_turn(
        self, run: AgentRun, tools: Sequence[FunctionTool] | None = None
    ) -> AsyncGenerator[AgentEvent, None]:
        """One model call over ``run.messages`` (with the executor's tools unless ``tools`` is
        given), streamed as agent events; the response is left in ``run.reply``."""
        run.turns += 1
        run.last_reply = None
        yield TurnStarted(run.turns)
        specs = self.executor.specs if tools is None else tuple(tools)
        events = self.llm.stream(run.messages, specs, state=run.context.state)
        async with aclosing(events) as stream:
            async for event in stream:
                if isinstance(event, TextDeltaEvent):
                    yield TextDelta(event.text)
                elif isinstance(event, ReasoningDeltaEvent):
                    yield ReasoningDelta(event.text)
                elif isinstance(event, LLMCompleted):
                    self._record(run, event.response)

    async def run_tools(
        self, run: AgentRun, calls: Sequence[MessageToolCall]
    ) -> AsyncGenerator[AgentEvent, None]:
        """Run ``calls`` concurrently; the outcomes, in call order, are left in
        ``run.outcomes`` (and added to the run's tool results)."""
        for call in calls:
            yield ToolStarted(call)
        blocked_before = self.executor.blocked
        outcomes = await self.executor.run(calls, run.context)
        run.last_outcomes = outcomes
        run.tool_results.extend(outcomes)
        if blocked_before and self.executor.blocked > blocked_before:
            run.loop_detected = True
        for outcome in outcomes:
            finished = ToolFinished(outcome)
            _publish(run, finished)
            yield finished

    def finish(
        self,
        run: AgentRun,
        content: str,
        stop_reason: StopReason = "final",
        metadata: dict[str, JSONValue] | None = None,
    ) -> AgentFinished:
        """The run's last event, carrying its :class:`AgentResult`."""
        result = AgentResult(
            content=content,
            tool_results=tuple(run.tool_results),
            turns=run.turns,
            usage=run.usage,
            stop_reason=stop_reason,
            messages=tuple(run.messages),
            metadata=dict(metadata or {}),
        )
        finished = AgentFinished(result)
        _publish(run, finished)
        return finished

    def unfinished(
        self, run: AgentRun, stop_reason: StopReason, *, protocol: bool = False
    ) -> AgentFinished:
        """The result of a run stopped before a final answer: the model's last text, or a note
        saying why it stopped (always the note for text protocols, whose text is not prose)."""
        if stop_reason == "loop_guard":
            note = "Stopped: the model kept repeating tool calls the loop guard had blocked."
        else:
            note = f"Stopped after {run.turns} turns without a final answer."
        content = note if protocol or not run.last_text else run.last_text
        return self.finish(run, content, stop_reason)

    async def aclose(self) -> None:
        """Close the agent's tools."""
        await self.executor.aclose()

    # --- internals ---------------------------------------------------------------------------

    @staticmethod
    def _record(run: AgentRun, response: LLMResponse) -> None:
        run.last_reply = response
        run.usage = run.usage.add(response.metrics)
        if response.text.strip():
            run.last_text = response.text


def _publish(run: AgentRun, event: AgentEvent) -> None:
    """Tell the context's bus (if any) what the run did: each tool result and the result."""
    if run.context.bus is not None:
        run.context.bus.emit(event)
