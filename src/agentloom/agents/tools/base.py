"""The agent tool seam: a name, a description, a JSON schema and an async ``call``.

``function_tool`` turns a typed Python function into a tool (its schema comes from the
signature via pydantic). A tool signals a failure the model should see by raising
:class:`ToolError`; the executor turns it into an error observation.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError, create_model

from agentloom.agents.base import AgentContext
from agentloom.config import Settings
from agentloom.frozen import frozen
from agentloom.json_types import JSONObject
from agentloom.llm.types import FunctionTool

if TYPE_CHECKING:
    from agentloom.agents.memory import MemoryStore

__all__ = ["PythonFunctionTool", "Tool", "ToolError", "function_tool"]


@frozen
class ToolEnvironment:
    """What built-in tools may use: a workspace for files, a data directory for memory and
    sessions, the configuration (web search, code interpreter, MCP servers) and the session.
    ``memory``: where the memory tools keep notes (default: ``memory.db`` in ``data_dir``)."""

    workspace: Path = field(default_factory=Path.cwd)
    data_dir: Path = field(default_factory=lambda: Path.home() / ".agentloom")
    settings: Settings = field(default_factory=Settings)
    session_id: str = "default"
    memory: MemoryStore | None = None


class ToolError(Exception):
    """A tool failed in a way the model should be told about (the message is shown to it)."""


class Tool(ABC):
    name: str
    description: str
    parameters: JSONObject
    strict: bool | None = None  # the model path's default (FunctionTool.strict)

    @abstractmethod
    async def call(self, arguments: JSONObject, context: AgentContext) -> str:
        """Run the tool; the returned text is what the model sees."""

    def spec(self) -> FunctionTool:
        return FunctionTool(self.name, self.description, self.parameters, self.strict)

    async def aclose(self) -> None:  # noqa: B027 - optional hook, most tools hold nothing
        """Release what the tool holds (connections, processes)."""


class PythonFunctionTool(Tool):
    """A tool made from a Python function; arguments are validated against its signature."""

    def __init__(self, fn: Callable[..., Any], name: str | None = None) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        self.description = inspect.cleandoc(fn.__doc__ or "")
        fields: dict[str, Any] = {}
        self._wants_context = False
        for param in inspect.signature(fn, eval_str=True).parameters.values():
            if param.annotation is AgentContext:
                self._wants_context = True
                continue
            annotation = Any if param.annotation is inspect.Parameter.empty else param.annotation
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[param.name] = (annotation, default)
        self._model = create_model(f"{self.name}_arguments", **fields)
        schema = self._model.model_json_schema()
        schema.pop("title", None)
        self.parameters = schema

    async def call(self, arguments: JSONObject, context: AgentContext) -> str:
        try:
            parsed = self._model.model_validate(arguments)
        except ValidationError as exc:
            raise ToolError(_validation_message(exc)) from None
        kwargs = dict(parsed)
        if self._wants_context:
            kwargs[_context_name(self.fn)] = context
        result = self.fn(**kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result if isinstance(result, str) else _text(result)


def function_tool(fn: Callable[..., Any] | None = None, *, name: str | None = None) -> Any:
    """Decorator: ``@function_tool`` or ``@function_tool(name="...")`` makes a :class:`Tool`."""

    def wrap(inner: Callable[..., Any | Awaitable[Any]]) -> PythonFunctionTool:
        return PythonFunctionTool(inner, name)

    return wrap(fn) if fn is not None else wrap


def _context_name(fn: Callable[..., Any]) -> str:
    for param in inspect.signature(fn, eval_str=True).parameters.values():
        if param.annotation is AgentContext:
            return param.name
    raise AssertionError("no context parameter")


def _validation_message(exc: ValidationError) -> str:
    problems = [
        f"{'.'.join(str(p) for p in error['loc']) or 'arguments'}: {error['msg']}"
        for error in exc.errors()
    ]
    return "invalid arguments: " + "; ".join(problems)


def _text(value: object) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)
