"""Every agent strategy and built-in tool, in two tables keyed by name.

Entries import their module when built, so an unused strategy (or a tool's dependencies) costs
nothing. ``agentloom agents`` / ``agentloom tools`` list these tables.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from agentloom.agents.base import BaseAgent
from agentloom.agents.sandbox_policy import SandboxSpec
from agentloom.agents.tools.base import Tool, ToolEnvironment
from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.llm.client import LLM

if TYPE_CHECKING:
    from agentloom.agents.sessions import SessionStore

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


@frozen
class AgentOptions:
    """How a strategy is built. Operatives keep their sessions in ``sessions`` (default: the
    ``agents.db`` file in ``data_dir``) under ``agent_name`` (default: the strategy's name), and
    work on ``task`` (shown in their system prompt; their tick's input when given none)."""

    instructions: str | None = None
    max_turns: int = 10
    data_dir: Path = field(default_factory=lambda: Path.home() / ".agentloom")  # operative sessions
    strategies: Mapping[str, str] = field(default_factory=dict)  # monitor_operative: axis -> choice
    sandbox: SandboxSpec = field(default_factory=SandboxSpec)  # the sandboxed agent's
    sessions: SessionStore | None = None
    agent_name: str | None = None
    task: str | None = None

    def session_store(self) -> SessionStore:
        from agentloom.agents.sessions import SessionStore

        return self.sessions or SessionStore.in_dir(self.data_dir)


AgentFactory = Callable[[LLM, Sequence[Tool], AgentOptions], BaseAgent]
ToolFactory = Callable[[ToolEnvironment], Tool]


@frozen
class AgentEntry:
    description: str
    build: AgentFactory


@frozen
class ToolEntry:
    description: str
    build: ToolFactory


MCP_PREFIX = "mcp:"  # build_tools(["mcp:<label>"]): a declared MCP server's tools


def _web_search(environment: ToolEnvironment) -> Tool:
    from agentloom.agents.tools.web import web_search_tool

    return web_search_tool(environment.settings.web_search)


def _code_interpreter(environment: ToolEnvironment) -> Tool:
    from agentloom.agents.tools.code import code_interpreter_tool

    settings = environment.settings.code_interpreter
    return code_interpreter_tool(settings, environment.data_dir, environment.session_id)


def _simple(llm: LLM, tools: Sequence[Tool], options: AgentOptions) -> BaseAgent:
    from agentloom.agents.simple import SimpleAgent

    if tools:
        raise InvalidRequestError("the simple agent uses no tools; pick another agent for tools")
    return SimpleAgent(llm, instructions=options.instructions)


def _orchestrator(llm: LLM, tools: Sequence[Tool], options: AgentOptions) -> BaseAgent:
    from agentloom.agents.orchestrator import OrchestratorAgent

    return OrchestratorAgent(
        llm, tools, instructions=options.instructions, max_turns=options.max_turns
    )


def _structured(llm: LLM, tools: Sequence[Tool], options: AgentOptions) -> BaseAgent:
    from agentloom.agents.orchestrator import OrchestratorAgent

    i, n = options.instructions, options.max_turns
    return OrchestratorAgent(llm, tools, instructions=i, max_turns=n, mode="structured")


def _react(llm: LLM, tools: Sequence[Tool], options: AgentOptions) -> BaseAgent:
    from agentloom.agents.react import ReactAgent

    return ReactAgent(llm, tools, instructions=options.instructions, max_turns=options.max_turns)


def _operative(llm: LLM, tools: Sequence[Tool], options: AgentOptions) -> BaseAgent:
    from agentloom.agents.operative import OperativeAgent

    store, name = options.session_store(), options.agent_name or "operative"
    i, n = options.instructions, options.max_turns
    return OperativeAgent(
        llm, tools, store=store, agent_name=name, task=options.task, instructions=i, max_turns=n
    )


def _monitor_operative(llm: LLM, tools: Sequence[Tool], options: AgentOptions) -> BaseAgent:
    from agentloom.agents.monitor import MonitorOperativeAgent, MonitorStrategies

    strategies = MonitorStrategies.parse(options.strategies)
    store, name = options.session_store(), options.agent_name or "monitor_operative"
    i, n = options.instructions, options.max_turns
    return MonitorOperativeAgent(
        llm,
        tools,
        store=store,
        agent_name=name,
        task=options.task,
        strategies=strategies,
        instructions=i,
        max_turns=n,
    )


def _codeact(llm: LLM, tools: Sequence[Tool], options: AgentOptions) -> BaseAgent:
    from agentloom.agents.codeact import CodeActAgent

    return CodeActAgent(llm, tools, instructions=options.instructions, max_turns=options.max_turns)


def _native_openhands(llm: LLM, tools: Sequence[Tool], options: AgentOptions) -> BaseAgent:
    from agentloom.agents.codeact import CodeActAgent
    from agentloom.agents.url_prefetch import UrlPrefetch

    i, n = options.instructions, options.max_turns
    return CodeActAgent(llm, tools, instructions=i, max_turns=n, prefetch=UrlPrefetch())


def _rlm(llm: LLM, tools: Sequence[Tool], options: AgentOptions) -> BaseAgent:
    from agentloom.agents.rlm import RLMAgent

    return RLMAgent(llm, tools, instructions=options.instructions, max_turns=options.max_turns)


def _sandboxed(llm: LLM, tools: Sequence[Tool], options: AgentOptions) -> BaseAgent:
    from agentloom.agents.sandboxed import SandboxedAgent

    spec = options.sandbox
    named = tuple(tool.name for tool in tools if tool.name not in spec.tools)
    spec = replace(spec, tools=(*spec.tools, *named))  # rebuilt by name inside the sandbox
    i, n = options.instructions, options.max_turns
    return SandboxedAgent(llm, spec, instructions=i, max_turns=n)


def _claude_code(llm: LLM, tools: Sequence[Tool], options: AgentOptions) -> BaseAgent:
    from agentloom.agents.claude_code import ClaudeCodeAgent, ClaudeCodeRuntime

    if tools:
        raise InvalidRequestError("the claude_code agent uses Claude Code's own tools; give none")
    runtime = ClaudeCodeRuntime.find(options.data_dir / "claude_code")
    key, url = os.environ.get("ANTHROPIC_API_KEY"), os.environ.get("ANTHROPIC_BASE_URL")
    i, n = options.instructions, options.max_turns
    return ClaudeCodeAgent(llm, runtime, instructions=i, max_turns=n, api_key=key, base_url=url)


def _openhands(llm: LLM, tools: Sequence[Tool], options: AgentOptions) -> BaseAgent:
    from agentloom.agents.openhands import OpenHandsAgent

    if tools:
        raise InvalidRequestError("the openhands agent uses OpenHands' own tools; give none")
    i, n = options.instructions, options.max_turns
    return OpenHandsAgent(llm, instructions=i, max_turns=n)


def _calculator(environment: ToolEnvironment) -> Tool:
    from agentloom.agents.tools.calculator import CalculatorTool

    return CalculatorTool()


def _think(environment: ToolEnvironment) -> Tool:
    from agentloom.agents.tools.think import ThinkTool

    return ThinkTool()


def _file_read(environment: ToolEnvironment) -> Tool:
    from agentloom.agents.tools.files import FileReadTool

    return FileReadTool(environment.workspace)


def _memory_store(environment: ToolEnvironment) -> Tool:
    from agentloom.agents.tools.memory import MemoryStoreTool

    return MemoryStoreTool.for_environment(environment)


def _memory_search(environment: ToolEnvironment) -> Tool:
    from agentloom.agents.tools.memory import MemorySearchTool

    return MemorySearchTool.for_environment(environment)


AGENTS: dict[str, AgentEntry] = {
    "simple": AgentEntry("One model call, no tools", _simple),
    "orchestrator": AgentEntry("Function-calling loop; parallel tool calls", _orchestrator),
    "structured": AgentEntry("Orchestrator over a text protocol (no native tools)", _structured),
    "react": AgentEntry("Thought / Action / Observation loop in plain text", _react),
    "codeact": AgentEntry("The model writes Python, run in a persistent sandboxed REPL", _codeact),
    "rlm": AgentEntry("Long context in a REPL variable, read by code and sub-calls", _rlm),
    "operative": AgentEntry("Scheduled, persistent: resumes its session each tick", _operative),
    "monitor_operative": AgentEntry(
        "Long-horizon operative: causal memory, compression, recall, phases", _monitor_operative
    ),
    "sandboxed": AgentEntry("Another agent, run isolated (bubblewrap, Docker, Podman)", _sandboxed),
    "claude_code": AgentEntry("Claude Code, via its Agent SDK on Node (optional)", _claude_code),
    "openhands": AgentEntry("OpenHands' default agent, via its SDK (optional extra)", _openhands),
    # OpenJarvis's names for two of the above
    "native_react": AgentEntry("Alias of react (OpenJarvis's name)", _react),
    "native_openhands": AgentEntry(
        "codeact that first fetches the pages the input links to (OpenJarvis's)", _native_openhands
    ),
}
TOOLS: dict[str, ToolEntry] = {
    "calculator": ToolEntry("Evaluate an arithmetic expression safely", _calculator),
    "think": ToolEntry("Write down a thought; changes nothing", _think),
    "file_read": ToolEntry("Read a text file inside the workspace", _file_read),
    "memory_store": ToolEntry("Remember a note for this session, across runs", _memory_store),
    "memory_search": ToolEntry("Search this session's remembered notes", _memory_search),
    "web_search": ToolEntry("Search the web ([web_search] settings)", _web_search),
    "code_interpreter": ToolEntry("Run Python in the sandbox, per session", _code_interpreter),
}


def build_agent(
    name: str, llm: LLM, tools: Sequence[Tool] = (), options: AgentOptions | None = None
) -> BaseAgent:
    entry = AGENTS.get(name)
    if entry is None:
        _discover()
        entry = AGENTS.get(name)
    if entry is None:
        raise UnknownNameError(f"unknown agent {name!r}; known agents: {', '.join(sorted(AGENTS))}")
    return entry.build(llm, tools, options or AgentOptions())


def build_tools(names: Sequence[str], environment: ToolEnvironment) -> list[Tool]:
    """The named tools; ``"mcp:<label>"`` adds every tool of that ``[[mcp.servers]]`` server."""
    if any(name not in TOOLS and not name.startswith(MCP_PREFIX) for name in names):
        _discover()
    unknown = [name for name in names if name not in TOOLS and not name.startswith(MCP_PREFIX)]
    if unknown:
        raise UnknownNameError(
            f"unknown tool(s) {', '.join(map(repr, unknown))}; known tools: "
            f"{', '.join(sorted(TOOLS))}"
        )
    tools: list[Tool] = []
    for name in names:
        if name.startswith(MCP_PREFIX):
            tools.extend(_mcp_tools(name.removeprefix(MCP_PREFIX), environment))
        else:
            tools.append(TOOLS[name].build(environment))
    return tools


def _discover() -> None:
    """Installed packages' agents and tools (:mod:`agentloom.agents.registry`), read once."""
    from agentloom.agents.registry import discover_plugins

    discover_plugins()


def _mcp_tools(label: str, environment: ToolEnvironment) -> list[Tool]:
    from agentloom.agents.tools.mcp import declared_mcp_tools

    return declared_mcp_tools(label, environment.settings.mcp)
