"""Every agent strategy and built-in tool, in two tables keyed by name.

Entries import their module when built, so an unused strategy (or a tool's dependencies) costs
nothing. ``agentloom agents`` / ``agentloom tools`` list these tables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentloom.agents.base import BaseAgent
from agentloom.agents.tools.base import Tool
from agentloom.config import Settings
from agentloom.errors import InvalidRequestError
from agentloom.llm.client import LLM

__all__ = [
    "AGENTS",
    "TOOLS",
    "AgentEntry",
    "AgentOptions",
    "ToolEntry",
    "ToolEnvironment",
    "UnknownNameError",
    "build_agent",
    "build_tools",
]


class UnknownNameError(InvalidRequestError):
    """An agent or tool name that is not in its table."""


@dataclass(frozen=True, slots=True)
class AgentOptions:
    instructions: str | None = None
    max_turns: int = 10


@dataclass(frozen=True, slots=True)
class ToolEnvironment:
    """What built-in tools may use: a workspace for files, a data directory for memory and
    sessions, the configuration (web search, code interpreter, MCP servers) and the session."""

    workspace: Path = field(default_factory=Path.cwd)
    data_dir: Path = field(default_factory=lambda: Path.home() / ".agentloom")
    settings: Settings = field(default_factory=Settings)
    session_id: str = "default"


AgentFactory = Callable[[LLM, Sequence[Tool], AgentOptions], BaseAgent]
ToolFactory = Callable[[ToolEnvironment], Tool]


@dataclass(frozen=True, slots=True)
class AgentEntry:
    description: str
    build: AgentFactory


@dataclass(frozen=True, slots=True)
class ToolEntry:
    description: str
    build: ToolFactory


AGENTS: dict[str, AgentEntry] = {}
TOOLS: dict[str, ToolEntry] = {}


def build_agent(
    name: str, llm: LLM, tools: Sequence[Tool] = (), options: AgentOptions | None = None
) -> BaseAgent:
    entry = AGENTS.get(name)
    if entry is None:
        raise UnknownNameError(f"unknown agent {name!r}; known agents: {', '.join(sorted(AGENTS))}")
    return entry.build(llm, tools, options or AgentOptions())


def build_tools(names: Sequence[str], environment: ToolEnvironment) -> list[Tool]:
    unknown = [name for name in names if name not in TOOLS]
    if unknown:
        raise UnknownNameError(
            f"unknown tool(s) {', '.join(map(repr, unknown))}; known tools: "
            f"{', '.join(sorted(TOOLS))}"
        )
    return [TOOLS[name].build(environment) for name in names]
