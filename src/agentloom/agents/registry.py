"""Adding agents and tools to the two tables of :mod:`agentloom.agents.builders`: by decorator,
and from installed packages' entry points.

```python
from agentloom.agents import BaseAgent, register_agent, register_tool

@register_agent("echo")
class EchoAgent(BaseAgent): ...          # built as EchoAgent(llm, instructions=...)

@register_tool("shout")
def shout(word: str) -> str:             # made a function tool
    \"\"\"Upper-case a word.\"\"\"
    return word.upper()
```

A class is built the way the table builds its own: a :class:`ToolUsingAgent` subclass as
``cls(llm, tools, instructions=..., max_turns=...)``, any other :class:`BaseAgent` as
``cls(llm, instructions=...)`` (it takes no tools). A function ``(llm, tools, options) ->
BaseAgent`` is the table's own kind of builder. For tools: a :class:`Tool` subclass is built as
``cls()``, a :class:`Tool` instance (``@function_tool``'s) is used as it is, a plain function is
made a function tool. A name already in the table is refused unless ``replace=True``.

Third-party packages declare theirs as entry points, read when a name is first looked up (or
the tables listed), never at import::

    [project.entry-points."agentloom.agents"]
    echo = "my_package.agents:EchoAgent"
    [project.entry-points."agentloom.tools"]
    shout = "my_package.tools:shout"

An entry point is loaded when its agent or tool is first built; one that cannot be loaded, or
whose object is not of a kind above, is a :class:`PluginError` naming the package. A name the
table has already (built in or decorated) wins over an entry point's, which is logged.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Sequence
from importlib.metadata import EntryPoint, entry_points
from typing import Final, TypeVar

from agentloom.agents.base import BaseAgent
from agentloom.agents.builders import (
    AGENTS,
    TOOLS,
    AgentEntry,
    AgentFactory,
    AgentOptions,
    ToolEntry,
    ToolFactory,
)
from agentloom.agents.tool_agent import ToolUsingAgent
from agentloom.agents.tools.base import PythonFunctionTool, Tool, ToolEnvironment
from agentloom.errors import AgentloomError, InvalidRequestError
from agentloom.llm.client import LLM

__all__ = [
    "AGENT_GROUP",
    "TOOL_GROUP",
    "AgentRegistry",
    "PluginError",
    "ToolRegistry",
    "discover_plugins",
    "register_agent",
    "register_tool",
]

log = logging.getLogger(__name__)

AGENT_GROUP: Final = "agentloom.agents"
TOOL_GROUP: Final = "agentloom.tools"

A = TypeVar("A", bound=type[BaseAgent] | Callable[..., BaseAgent])
T = TypeVar("T", bound=type[Tool] | Tool | Callable[..., object])


class PluginError(AgentloomError):
    """An installed package's agent or tool that cannot be loaded or used."""


# --- decorators ------------------------------------------------------------------------------


def register_agent(
    name: str, description: str | None = None, *, replace: bool = False
) -> Callable[[A], A]:
    """Decorator adding an agent class or builder function to the agent table as ``name``."""

    def add(target: A) -> A:
        _claim(AGENTS, name, "agent", replace)
        AGENTS[name] = AgentEntry(_describe(target, description), _agent_factory(target, name))
        return target

    return add


def register_tool(
    name: str | None = None, description: str | None = None, *, replace: bool = False
) -> Callable[[T], T]:
    """Decorator adding a tool class, tool or function to the tool table (as ``name``, default
    the tool's own name); the decorated object is returned unchanged."""

    def add(target: T) -> T:
        factory, own = _tool_factory(target, name)
        key = name or own
        _claim(TOOLS, key, "tool", replace)
        TOOLS[key] = ToolEntry(_describe(target, description), factory)
        return target

    return add


def _claim(
    table: dict[str, AgentEntry] | dict[str, ToolEntry], name: str, kind: str, replace: bool
) -> None:
    if not name or not name.strip():
        raise ValueError(f"a registered {kind} needs a name")
    if name in table and not replace:
        raise ValueError(f"the {kind} name {name!r} is taken; pick another or pass replace=True")


def _describe(target: object, given: str | None) -> str:
    if given is not None:
        return given
    if isinstance(target, type) and issubclass(target, BaseAgent) and target.description:
        return target.description
    if isinstance(target, Tool):
        return target.description.splitlines()[0] if target.description else ""
    if isinstance(target, type) and issubclass(target, Tool):
        own = getattr(target, "description", "")
        return own.splitlines()[0] if isinstance(own, str) and own else ""
    doc = inspect.getdoc(target) or ""
    return doc.splitlines()[0] if doc else ""


def _agent_factory(target: object, name: str) -> AgentFactory:
    if isinstance(target, type):
        if issubclass(target, ToolUsingAgent):
            return _tool_using(target)
        if issubclass(target, BaseAgent):
            return _toolless(target, name)
        raise TypeError(f"agent {name!r}: {target.__name__} is not a BaseAgent subclass")
    if callable(target):
        return _checked(target, name)
    raise TypeError(f"agent {name!r}: give a BaseAgent subclass or a builder function")


def _tool_using(cls: type[ToolUsingAgent]) -> AgentFactory:
    def build(llm: LLM, tools: Sequence[Tool], options: AgentOptions) -> BaseAgent:
        return cls(llm, tools, instructions=options.instructions, max_turns=options.max_turns)

    return build


def _toolless(cls: type[BaseAgent], name: str) -> AgentFactory:
    def build(llm: LLM, tools: Sequence[Tool], options: AgentOptions) -> BaseAgent:
        if tools:
            raise InvalidRequestError(f"the {name} agent uses no tools; pick another agent")
        return cls(llm, instructions=options.instructions)

    return build


def _checked(function: Callable[..., object], name: str) -> AgentFactory:
    def build(llm: LLM, tools: Sequence[Tool], options: AgentOptions) -> BaseAgent:
        agent = function(llm, tools, options)
        if not isinstance(agent, BaseAgent):
            raise TypeError(f"the builder of agent {name!r} returned {type(agent).__name__}")
        return agent

    return build


def _tool_factory(target: object, name: str | None) -> tuple[ToolFactory, str]:
    if isinstance(target, Tool):
        return (lambda environment: target), target.name
    if isinstance(target, type):
        if not issubclass(target, Tool):
            raise TypeError(f"{target.__name__} is not a Tool subclass")
        own = getattr(target, "name", None)
        return (lambda environment: target()), own if isinstance(own, str) else ""
    if callable(target):
        made = PythonFunctionTool(target, name)
        return (lambda environment: made), made.name
    raise TypeError("give a Tool subclass, a Tool or a function")


# --- the seed's registry classes ---------------------------------------------------------------


class AgentRegistry:
    """OpenJarvis's spelling of the agent table: ``@AgentRegistry.register("name")``,
    ``contains``, ``get`` (the table's entry) and ``keys``, installed packages' included."""

    @staticmethod
    def register(
        name: str, description: str | None = None, *, replace: bool = False
    ) -> Callable[[A], A]:
        return register_agent(name, description, replace=replace)

    @staticmethod
    def contains(name: str) -> bool:
        discover_plugins()
        return name in AGENTS

    @staticmethod
    def get(name: str) -> AgentEntry:
        discover_plugins()
        return AGENTS[name]

    @staticmethod
    def keys() -> list[str]:
        discover_plugins()
        return list(AGENTS)


class ToolRegistry:
    """The tool table in the same spelling."""

    @staticmethod
    def register(
        name: str | None = None, description: str | None = None, *, replace: bool = False
    ) -> Callable[[T], T]:
        return register_tool(name, description, replace=replace)

    @staticmethod
    def contains(name: str) -> bool:
        discover_plugins()
        return name in TOOLS

    @staticmethod
    def get(name: str) -> ToolEntry:
        discover_plugins()
        return TOOLS[name]

    @staticmethod
    def keys() -> list[str]:
        discover_plugins()
        return list(TOOLS)


# --- entry points ----------------------------------------------------------------------------

_discovered = False
_added: set[tuple[str, str, str]] = set()  # (group, name, value) of the entry points added


def discover_plugins(*, again: bool = False) -> None:
    """Add the installed packages' entry points to the tables: once per process, or ``again``
    (after installing a package). What they name is loaded when first built."""
    global _discovered
    if _discovered and not again:
        return
    _discovered = True
    for point in entry_points(group=AGENT_GROUP):
        if _vacant(AGENTS, point, "agent"):
            AGENTS[point.name] = AgentEntry(_origin(point), _lazy_agent(point))
    for point in entry_points(group=TOOL_GROUP):
        if _vacant(TOOLS, point, "tool"):
            TOOLS[point.name] = ToolEntry(_origin(point), _lazy_tool(point))


def _vacant(
    table: dict[str, AgentEntry] | dict[str, ToolEntry], point: EntryPoint, kind: str
) -> bool:
    key = (point.group, point.name, point.value)
    if key in _added:
        return False  # this very entry point, from an earlier discovery
    if point.name in table:
        package = _package(point)
        log.warning(
            "the %s %r of package %s is not added: the name is taken", kind, point.name, package
        )
        return False
    _added.add(key)
    return True


def _lazy_agent(point: EntryPoint) -> AgentFactory:
    def build(llm: LLM, tools: Sequence[Tool], options: AgentOptions) -> BaseAgent:
        target = _load(point, "agent")
        try:
            factory = _agent_factory(target, point.name)
        except TypeError as exc:
            raise _plugin_error(point, "agent", exc) from None
        return factory(llm, tools, options)

    return build


def _lazy_tool(point: EntryPoint) -> ToolFactory:
    def build(environment: ToolEnvironment) -> Tool:
        target = _load(point, "tool")
        try:
            factory, _ = _tool_factory(target, point.name)
        except TypeError as exc:
            raise _plugin_error(point, "tool", exc) from None
        return factory(environment)

    return build


def _load(point: EntryPoint, kind: str) -> object:
    try:
        return point.load()
    except Exception as exc:  # an import of someone else's code: any error is theirs
        raise _plugin_error(point, kind, exc) from exc


def _plugin_error(point: EntryPoint, kind: str, exc: BaseException) -> PluginError:
    return PluginError(
        f"the {kind} {point.name!r} of package {_package(point)} (entry point {point.group}: "
        f"{point.name} = {point.value}) cannot be used: {type(exc).__name__}: {exc}"
    )


def _package(point: EntryPoint) -> str:
    dist = point.dist
    return f"{dist.name} {dist.version}" if dist is not None else "(unknown package)"


def _origin(point: EntryPoint) -> str:
    return f"From the package {_package(point)}"
