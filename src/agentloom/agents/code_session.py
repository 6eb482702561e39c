"""What the code agents add to the tool seam: the ``python`` tool, and tools as functions.

:class:`PythonTool` runs code in the run's :class:`~agentloom.agents.repl.Repl`; the code
agents turn each fenced block into a ``python`` call, so code runs go through the one tool
executor (loop guard, events, results) like any tool, and a model may also call ``python``
natively. :class:`CodeSession` is one run's bookkeeping: it makes each other tool a Python
function in the REPL (a host function running the call through the executor) and keeps what
the code did (tool calls, their events, the usage of model sub-calls) until the agent takes it.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Mapping, Sequence

from agentloom.agents.base import (
    AgentContext,
    AgentEvent,
    AgentUsage,
    ToolFinished,
    ToolOutcome,
    ToolStarted,
)
from agentloom.agents.code_reply import observation
from agentloom.agents.executor import ToolExecutor
from agentloom.agents.repl import CallbackError, HostFunction, Repl, ReplResult
from agentloom.agents.tools.base import Tool, ToolError
from agentloom.json_types import JSONObject, JSONValue
from agentloom.llm.types import MessageToolCall, Metrics

__all__ = [
    "PYTHON",
    "CodeSession",
    "PythonTool",
    "ToolFunction",
    "describe_tools",
    "python_name",
]

PYTHON = "python"  # the code tool's name: what ToolStarted / ToolFinished say for code runs


class PythonTool(Tool):
    """Runs code in the attached REPL; a run that raised is an error outcome (marked)."""

    name = PYTHON
    description = (
        "Run Python code in the persistent REPL (variables persist between runs); returns what "
        "it printed and any error."
    )
    parameters: JSONObject = {
        "type": "object",
        "properties": {"code": {"type": "string", "description": "Python code to run."}},
        "required": ["code"],
        "additionalProperties": False,
    }

    def __init__(self, output_chars: int = 4000) -> None:
        self.output_chars = output_chars
        self.repl: Repl | None = None  # attached by the agent for the length of a run
        self.results: list[ReplResult] = []

    async def call(self, arguments: JSONObject, context: AgentContext) -> str:
        if self.repl is None:
            raise ToolError("no Python REPL is running")
        code = arguments.get("code")
        if not isinstance(code, str):
            raise ToolError("`code` must be a string of Python code")
        result = await self.repl.execute(code)
        self.results.append(result)
        text = observation(result, self.output_chars)
        if result.error is not None:
            raise ToolError(f"the code failed\n{text}")
        return text

    def take_final(self) -> str | None:
        """The first ``FINAL`` value given since the last call, as text (``None``: none)."""
        finals = [result.final for result in self.results if result.final_set]
        self.results.clear()
        if not finals:
            return None
        value = finals[0]
        return value if isinstance(value, str) else json.dumps(value)


def python_name(name: str) -> str:
    """A tool name as a Python identifier (``web-search`` -> ``web_search``)."""
    cleaned = re.sub(r"\W", "_", name)
    return cleaned if cleaned.isidentifier() else f"_{cleaned}"


class ToolFunction:
    """A tool as an async host function: positional or keyword arguments, by the tool's
    schema; the call runs through the session's executor."""

    def __init__(self, session: CodeSession, tool: Tool) -> None:
        self.session = session
        self.tool = tool
        self.__signature__ = _signature(tool.parameters)
        self.__doc__ = tool.description or f"The {tool.name} tool."

    async def __call__(self, *args: JSONValue, **kwargs: JSONValue) -> JSONValue:
        try:
            bound = self.__signature__.bind(*args, **kwargs)
        except TypeError as exc:
            raise CallbackError(f"{self.tool.name}(): {exc}") from None
        return await self.session.call_tool(self.tool.name, dict(bound.arguments))


def _signature(schema: JSONObject) -> inspect.Signature:
    properties = schema.get("properties")
    required = schema.get("required")
    names = [n for n in properties if n.isidentifier()] if isinstance(properties, dict) else []
    needed = [n for n in names if isinstance(required, list) and n in required]
    optional = [n for n in names if n not in needed]
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return inspect.Signature(
        [inspect.Parameter(n, kind) for n in needed]
        + [inspect.Parameter(n, kind, default=None) for n in optional]
    )


class CodeSession:
    """One run of a code agent: the tools its code may call, and what the code did."""

    def __init__(self, executor: ToolExecutor, context: AgentContext) -> None:
        self.executor = executor
        self.context = context
        self.events: list[AgentEvent] = []
        self.outcomes: list[ToolOutcome] = []
        self.usage = AgentUsage()
        self._calls = 0

    def tool_functions(self) -> dict[str, HostFunction]:
        """Every tool but ``python`` itself, as a function named after it."""
        return {
            python_name(tool.name): ToolFunction(self, tool)
            for tool in self.executor.tools.values()
            if tool.name != PYTHON
        }

    async def call_tool(self, name: str, arguments: JSONObject) -> JSONValue:
        self._calls += 1
        call = MessageToolCall(f"code_call_{self._calls}", name, json.dumps(arguments))
        self.events.append(ToolStarted(call))
        [outcome] = await self.executor.run([call], self.context)
        self.events.append(ToolFinished(outcome))
        self.outcomes.append(outcome)
        if outcome.is_error:
            raise CallbackError(outcome.output)
        return outcome.output

    def add_usage(self, metrics: Metrics) -> None:
        self.usage = self.usage.add(metrics)

    def take_events(self) -> list[AgentEvent]:
        taken, self.events = self.events, []
        return taken

    def take_outcomes(self) -> list[ToolOutcome]:
        taken, self.outcomes = self.outcomes, []
        return taken

    def take_usage(self) -> AgentUsage:
        taken, self.usage = self.usage, AgentUsage()
        return taken


def describe_tools(functions: Mapping[str, HostFunction], tools: Sequence[Tool]) -> str:
    """One line per tool among ``functions``: its signature in the REPL and its description
    (other host functions are for the strategy's prompt to describe)."""
    lines = []
    for tool in tools:
        name = python_name(tool.name)
        if name in functions:
            about = (tool.description or "").strip().splitlines() or [""]
            lines.append(f"- {name}{inspect.signature(functions[name])}: {about[0]}")
    return "\n".join(lines)
