"""The tool executor: runs a model's tool calls concurrently and reports each one's outcome.

Nothing a tool does escapes as an exception (only cancellation does): an unknown tool, arguments
that are not a JSON object, a :class:`ToolError`, or any other failure becomes an error
:class:`ToolOutcome` whose text tells the model what went wrong, so it can correct itself.
Outcomes come back in call order, whatever order the tools finish in.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from agentloom.agents.base import AgentContext, ToolOutcome
from agentloom.agents.loop_guard import LoopGuard
from agentloom.agents.tools.base import Tool, ToolError
from agentloom.llm.types import FunctionTool, MessageToolCall

__all__ = ["ToolExecutor"]

log = logging.getLogger(__name__)


class ToolExecutor:
    """The tools of an agent, by name, and the loop guard their calls go through.

    ``tripped`` turns true once the guard has blocked a call; ``blocked`` counts blocked calls.
    """

    def __init__(self, tools: Sequence[Tool] = (), guard: LoopGuard | None = None) -> None:
        named: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in named:
                raise ValueError(f"two tools are named {tool.name!r}; tool names must be unique")
            named[tool.name] = tool
        self._tools = named
        self.guard = guard
        self.blocked = 0

    @property
    def tools(self) -> Mapping[str, Tool]:
        return MappingProxyType(self._tools)

    @property
    def specs(self) -> tuple[FunctionTool, ...]:
        return tuple(tool.spec() for tool in self._tools.values())

    @property
    def tripped(self) -> bool:
        return self.blocked > 0

    def reset(self) -> None:
        """Start a new run: the guard forgets past calls."""
        self.blocked = 0
        if self.guard is not None:
            self.guard.reset()

    async def run(
        self, calls: Sequence[MessageToolCall], context: AgentContext
    ) -> list[ToolOutcome]:
        """Run ``calls`` concurrently; their outcomes, in call order."""
        verdicts = [self._admit(call) for call in calls]  # in call order: the guard is ordered
        async with asyncio.TaskGroup() as group:
            tasks = [
                group.create_task(self._run_one(call, context)) if verdict is None else None
                for call, verdict in zip(calls, verdicts, strict=True)
            ]
        return [
            task.result() if task is not None else _failed(call, verdict or "")
            for call, verdict, task in zip(calls, verdicts, tasks, strict=True)
        ]

    async def aclose(self) -> None:
        """Close every tool (each is closed even if another fails to)."""
        errors: list[Exception] = []
        for tool in self._tools.values():
            try:
                await tool.aclose()
            except Exception as exc:  # one tool's failure must not leak the others
                errors.append(exc)
        if errors:
            raise ExceptionGroup("closing tools failed", errors)

    def _admit(self, call: MessageToolCall) -> str | None:
        if self.guard is None:
            return None
        verdict = self.guard.check(call)
        if verdict is not None:
            self.blocked += 1
        return verdict

    async def _run_one(self, call: MessageToolCall, context: AgentContext) -> ToolOutcome:
        tool = self._tools.get(call.name)
        if tool is None:
            return _failed(call, self._unknown(call.name))
        try:
            arguments = call.parsed_arguments()
        except ValueError as exc:
            return _failed(call, f"error: invalid arguments for {call.name}: {exc}")
        try:
            output = await tool.call(arguments, context)
        except ToolError as exc:
            return _failed(call, f"error: {exc}")
        except Exception as exc:  # a tool's bug is reported to the model, and logged
            log.warning("tool %s raised", call.name, exc_info=True)
            return _failed(call, f"error: {call.name} failed: {type(exc).__name__}: {exc}")
        return ToolOutcome(call.call_id, call.name, call.arguments, output)

    def _unknown(self, name: str) -> str:
        known = ", ".join(sorted(self._tools)) or "none"
        return f"error: there is no tool named {name!r}; available tools: {known}"


def _failed(call: MessageToolCall, output: str) -> ToolOutcome:
    return ToolOutcome(call.call_id, call.name, call.arguments, output, is_error=True)
