"""The tools a client runs (``function``, ``custom``, and those grouped in a ``namespace``), as
chat backends see them: functions with JSON arguments and names of ``^[a-zA-Z0-9_-]{1,64}$``.

- A namespace's tools are flattened: ``multi_agent_v1`` + ``close_agent`` is offered as
  ``multi_agent_v1__close_agent`` (a namespace already ending in ``__``, like Codex's
  ``mcp__server__``, is joined without another separator). The model's call of it goes back to
  the client with ``name`` = ``close_agent`` and ``namespace`` = ``multi_agent_v1``. A flattened
  name that is taken (by a top-level tool or another namespace's), or longer than 64
  characters, is a 400.
- A custom (freeform) tool is offered as a function of one string parameter, ``input``; the
  call goes back as a ``custom_tool_call`` whose ``input`` is that string.
- A ``tool_search`` the client runs is offered as the function ``tool_search``; the call goes
  back as a ``tool_search_call``. The tools of the client's ``tool_search_output`` are offered
  from then on (see :meth:`agentloom.engine.tool_plan.ToolPlan.with_loaded`).
- ``shell``, ``local_shell`` and ``apply_patch`` are offered as functions of their own names;
  the calls go back as ``shell_call``, ``local_shell_call`` and ``apply_patch_call`` items (see
  :mod:`agentloom.engine.shell_tools`).

Replayed calls (``function_call`` with a namespace, ``custom_tool_call``) are shown to the
backend under the same names (:func:`chat_call`), so a stateless client's history matches the
tools offered.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Literal

from agentloom.api.items import CustomToolCall, FunctionCall, ToolSearchCall, ToolSearchOutput
from agentloom.api.shell_items import ShellKindCall
from agentloom.api.tools import (
    ApplyPatchTool,
    CustomTool,
    FunctionTool,
    GrammarInputFormat,
    LocalShellTool,
    NamespaceFunction,
    NamespaceTool,
    ShellTool,
    Tool,
    ToolSearchTool,
)
from agentloom.engine.shell_tools import chat_arguments, shell_spec
from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.inference import base as inf
from agentloom.json_types import JSONObject

MAX_CHAT_NAME = 64
INPUT_PARAMETER = "input"
NAMESPACE_SEPARATOR = "__"
TOOL_SEARCH = "tool_search"
_SEARCH_PARAMETERS: JSONObject = {
    "type": "object",
    "properties": {"query": {"type": "string", "description": "What the tools should do."}},
    "required": ["query"],
}
ClientKind = Literal["function", "custom", "tool_search", "shell", "local_shell", "apply_patch"]


@frozen
class ClientTool:
    """A tool the client runs, and the function a chat backend is offered for it."""

    kind: ClientKind
    name: str  # the tool's own name, as the client knows it
    namespace: str | None
    spec: inf.FunctionSpec  # spec.name: the name the backend knows it by
    param: str  # where the request declares it (``tools[2]``, ``tools[4].tools[1]``)

    @property
    def chat_name(self) -> str:
        return self.spec.name

    @classmethod
    def plain(cls, name: str) -> ClientTool:
        """A function known by its name only."""
        return cls("function", name, None, inf.FunctionSpec(name, None, {}), param="tools")


def chat_name(name: str, namespace: str | None) -> str:
    """The name a backend knows a tool by: ``name``, or ``namespace__name`` for a namespace's."""
    if namespace is None:
        return name
    separator = "" if namespace.endswith(NAMESPACE_SEPARATOR) else NAMESPACE_SEPARATOR
    return f"{namespace}{separator}{name}"


ClientToolParam = (
    FunctionTool
    | CustomTool
    | NamespaceTool
    | ToolSearchTool
    | ShellTool
    | LocalShellTool
    | ApplyPatchTool
)


def client_tools(tool: ClientToolParam, *, param: str) -> Iterator[ClientTool]:
    """The functions offered for one entry of a request's ``tools``."""
    if isinstance(tool, ShellTool | LocalShellTool | ApplyPatchTool):
        yield _shell_kind(tool, param=param)
    elif isinstance(tool, ToolSearchTool):
        yield _tool_search(tool, param=param)
    elif isinstance(tool, FunctionTool):
        spec = inf.FunctionSpec(
            name=tool.name,
            description=tool.description,
            parameters=tool.parameters,  # type: ignore[arg-type]
            strict=tool.strict,
        )
        yield ClientTool("function", tool.name, None, spec, param)
    elif isinstance(tool, CustomTool):
        yield ClientTool("custom", tool.name, None, custom_spec(tool, tool.name), param)
    else:
        yield from _members(tool, param=param)


def _tool_search(tool: ToolSearchTool, *, param: str) -> ClientTool:
    if tool.execution != "client":
        raise InvalidRequestError(
            "tool_search runs on the client only here: set 'execution' to 'client' and answer "
            "its calls with tool_search_output items.",
            param=f"{param}.execution",
        )
    spec = inf.FunctionSpec(
        name=TOOL_SEARCH,
        description=tool.description or "Search for more tools; the ones found are offered next.",
        parameters=tool.parameters or _SEARCH_PARAMETERS,  # type: ignore[arg-type]
    )
    return ClientTool("tool_search", TOOL_SEARCH, None, spec, param)


def _shell_kind(tool: ShellTool | LocalShellTool | ApplyPatchTool, *, param: str) -> ClientTool:
    if isinstance(tool, ShellTool) and tool.environment and tool.environment.type != "local":
        raise InvalidRequestError(
            "The shell tool runs on the client only here: its environment must be 'local' "
            "(answer its calls with shell_call_output items).",
            param=f"{param}.environment.type",
        )
    spec = shell_spec(tool.type)
    return ClientTool(tool.type, tool.type, None, spec, param)


def _members(namespace: NamespaceTool, *, param: str) -> Iterator[ClientTool]:
    seen: set[str] = set()
    for index, member in enumerate(namespace.tools):
        where = f"{param}.tools[{index}]"
        if member.name in seen:
            raise InvalidRequestError(
                f"Duplicate tool name '{member.name}' in namespace '{namespace.name}'.",
                param=f"{where}.name",
            )
        seen.add(member.name)
        name = chat_name(member.name, namespace.name)
        if len(name) > MAX_CHAT_NAME:
            raise InvalidRequestError(
                f"Tool '{member.name}' of namespace '{namespace.name}' is offered to the model "
                f"as '{name}', longer than {MAX_CHAT_NAME} characters: shorten the names.",
                param=f"{where}.name",
            )
        group = f"(Tool group '{namespace.name}'"
        group += f": {namespace.description})" if namespace.description else ")"
        if isinstance(member, NamespaceFunction):
            spec = _namespaced_spec(member, name, group)
            yield ClientTool("function", member.name, namespace.name, spec, where)
        else:
            spec = custom_spec(member, name, group=group)
            yield ClientTool("custom", member.name, namespace.name, spec, where)


def _namespaced_spec(member: NamespaceFunction, name: str, group: str) -> inf.FunctionSpec:
    parameters = member.parameters or {"type": "object", "properties": {}}
    return inf.FunctionSpec(
        name=name,
        description=_joined(group, member.description),
        parameters=parameters,  # type: ignore[arg-type]
        strict=bool(member.strict),
    )


def custom_spec(tool: CustomTool, name: str, *, group: str | None = None) -> inf.FunctionSpec:
    """A custom tool as a function whose one string parameter carries the raw input."""
    fmt = tool.format
    if isinstance(fmt, GrammarInputFormat):
        shape = f"Text matching this {fmt.syntax} grammar:\n{fmt.definition}"
    else:
        shape = "Raw text."
    parameters: JSONObject = {
        "type": "object",
        "properties": {
            INPUT_PARAMETER: {
                "type": "string",
                "description": f"The tool's whole input, as is (not JSON). {shape}",
            }
        },
        "required": [INPUT_PARAMETER],
        "additionalProperties": False,
    }
    description = _joined(group, tool.description) if group else tool.description
    return inf.FunctionSpec(name=name, description=description, parameters=parameters)


def _joined(group: str, description: str | None) -> str:
    return f"{group} {description}" if description else group


def custom_arguments(text: str) -> str:
    """The function arguments a backend is shown for a custom tool's ``text`` input."""
    return json.dumps({INPUT_PARAMETER: text})


def chat_call(item: FunctionCall | CustomToolCall | ToolSearchCall | ShellKindCall) -> inf.ToolCall:
    """A client tool's call as the backend sees it (its flattened name, JSON arguments)."""
    if isinstance(item, FunctionCall | CustomToolCall | ToolSearchCall):
        return _named_call(item)
    name, arguments = chat_arguments(item)
    return inf.ToolCall(id=item.call_id, name=name, arguments=arguments)


def _named_call(item: FunctionCall | CustomToolCall | ToolSearchCall) -> inf.ToolCall:
    if isinstance(item, ToolSearchCall):
        arguments = json.dumps(item.arguments)
        return inf.ToolCall(id=search_call_id(item), name=TOOL_SEARCH, arguments=arguments)
    name = chat_name(item.name, item.namespace)
    if isinstance(item, CustomToolCall):
        return inf.ToolCall(id=item.call_id, name=name, arguments=custom_arguments(item.input))
    return inf.ToolCall(id=item.call_id, name=name, arguments=item.arguments)


def search_call_id(item: ToolSearchCall) -> str:
    """The id pairing a tool search with its output (``call_id``, else the item's id)."""
    return item.call_id or item.id or TOOL_SEARCH


def found_text(item: ToolSearchOutput) -> str:
    """What the model is told a tool search found: the tools, by the names it may call."""
    lines = [
        f"- {name}: {description}" if description else f"- {name}"
        for tool in item.tools
        for name, description in _listed(tool)
    ]
    if not lines:
        return "No tools found."
    return "Tools found (you may call them now):\n" + "\n".join(lines)


def _listed(tool: Tool) -> list[tuple[str, str | None]]:
    if isinstance(tool, NamespaceTool):
        return [(chat_name(m.name, tool.name), m.description) for m in tool.tools]
    if isinstance(tool, FunctionTool | CustomTool):
        return [(tool.name, tool.description)]
    return []
