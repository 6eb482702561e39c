"""Which tools the model is offered, and how ``tool_choice`` is enforced.

The server does not just forward ``tool_choice``: it offers the backend only the tools the choice
allows, forces a named function where the backend supports it, and the turn streamer drops calls
to anything not offered (see :class:`agentloom.engine.turn.CallPolicy`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentloom.api.tools import (
    AllowedTools,
    FunctionTool,
    FunctionToolChoice,
    HostedTool,
    HostedToolChoice,
    Tool,
    ToolChoice,
)
from agentloom.engine.turn import CallPolicy
from agentloom.errors import InvalidRequestError
from agentloom.inference import base as inf


@dataclass(frozen=True, slots=True)
class ToolPlan:
    specs: tuple[inf.FunctionSpec, ...]
    choice: inf.ToolChoice | None
    policy: CallPolicy


def plan_tools(tools: Sequence[Tool], choice: ToolChoice, *, parallel: bool) -> ToolPlan:
    functions = _function_tools(tools)
    offered, mode = _select(functions, choice)
    specs = tuple(_spec(functions[name]) for name in offered)
    chat_choice: inf.ToolChoice | None = mode if specs else None
    if isinstance(choice, FunctionToolChoice):
        chat_choice = inf.NamedToolChoice(choice.name)
    return ToolPlan(
        specs=specs,
        choice=chat_choice,
        policy=CallPolicy(
            offered=frozenset(offered),
            single_call=not parallel,
            required=bool(specs) and mode == "required",
        ),
    )


def _function_tools(tools: Sequence[Tool]) -> dict[str, FunctionTool]:
    functions: dict[str, FunctionTool] = {}
    for index, tool in enumerate(tools):
        if isinstance(tool, HostedTool):
            raise InvalidRequestError(
                f"Tool type '{tool.type}' is not supported by this server yet; "
                "only 'function' tools can be used.",
                param=f"tools[{index}].type",
                code="unsupported_tool_type",
            )
        if tool.name in functions:
            raise InvalidRequestError(
                f"Duplicate tool name '{tool.name}'.", param=f"tools[{index}].name"
            )
        functions[tool.name] = tool
    return functions


def _select(
    functions: dict[str, FunctionTool], choice: ToolChoice
) -> tuple[list[str], inf.ToolChoice]:
    if isinstance(choice, str):
        return ([] if choice == "none" else list(functions)), choice
    if isinstance(choice, FunctionToolChoice):
        _require_known(functions, choice.name)
        return [choice.name], "required"
    if isinstance(choice, AllowedTools):
        return _allowed(functions, choice), choice.mode
    assert isinstance(choice, HostedToolChoice)
    raise InvalidRequestError(
        f"tool_choice type '{choice.type}' is not supported by this server yet.",
        param="tool_choice",
    )


def _allowed(functions: dict[str, FunctionTool], choice: AllowedTools) -> list[str]:
    names: list[str] = []
    for index, ref in enumerate(choice.tools):
        if ref.type != "function" or ref.name is None:
            raise InvalidRequestError(
                "allowed_tools can list only function tools ({'type': 'function', 'name': ...}).",
                param=f"tool_choice.tools[{index}]",
            )
        _require_known(functions, ref.name)
        names.append(ref.name)
    return names


def _require_known(functions: dict[str, FunctionTool], name: str) -> None:
    if name not in functions:
        raise InvalidRequestError(
            f"Tool choice '{name}' not found in 'tools' parameter.", param="tool_choice"
        )


def _spec(tool: FunctionTool) -> inf.FunctionSpec:
    return inf.FunctionSpec(
        name=tool.name,
        description=tool.description,
        parameters=tool.parameters,  # type: ignore[arg-type]
        strict=tool.strict,
    )
