"""Client-side agents: strategies over an :class:`~agentloom.llm.LLM`, their tools, a registry.

The names below are imported on first use, so that a module of the package (the managed agents'
client that ``agentloom agents`` uses, say) imports without every agent and tool.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentloom.agents.base import (
        AgentContext,
        AgentEvent,
        AgentFinished,
        AgentInput,
        AgentResult,
        AgentUsage,
        BaseAgent,
        MemoryResult,
        ReasoningDelta,
        StopReason,
        TextDelta,
        ToolFinished,
        ToolOutcome,
        ToolStarted,
        TurnStarted,
    )
    from agentloom.agents.builders import (
        AGENTS,
        TOOLS,
        AgentOptions,
        ToolEnvironment,
        build_agent,
        build_tools,
    )
    from agentloom.agents.codeact import CodeActAgent
    from agentloom.agents.connection import Connection, open_agent, resolve_connection
    from agentloom.agents.event_logger import EventLogger, LogLine
    from agentloom.agents.executor import ToolExecutor
    from agentloom.agents.loop_guard import LoopGuard
    from agentloom.agents.orchestrator import OrchestratorAgent
    from agentloom.agents.react import ReactAgent
    from agentloom.agents.registry import PluginError, register_agent, register_tool
    from agentloom.agents.repl import Repl, ReplResult
    from agentloom.agents.rlm import RLMAgent
    from agentloom.agents.simple import SimpleAgent
    from agentloom.agents.tool_agent import AgentRun, ToolUsingAgent
    from agentloom.agents.tools.base import Tool, ToolError, function_tool
    from agentloom.agents.turns import ToolOutput, TurnEvent, TurnResult

__all__ = [
    "AGENTS",
    "TOOLS",
    "AgentContext",
    "AgentEvent",
    "AgentFinished",
    "AgentInput",
    "AgentOptions",
    "AgentResult",
    "AgentRun",
    "AgentUsage",
    "BaseAgent",
    "CodeActAgent",
    "Connection",
    "EventLogger",
    "LogLine",
    "LoopGuard",
    "MemoryResult",
    "OrchestratorAgent",
    "PluginError",
    "RLMAgent",
    "ReactAgent",
    "ReasoningDelta",
    "Repl",
    "ReplResult",
    "SimpleAgent",
    "StopReason",
    "TextDelta",
    "Tool",
    "ToolEnvironment",
    "ToolError",
    "ToolExecutor",
    "ToolFinished",
    "ToolOutcome",
    "ToolOutput",
    "ToolStarted",
    "ToolUsingAgent",
    "TurnEvent",
    "TurnResult",
    "TurnStarted",
    "build_agent",
    "build_tools",
    "function_tool",
    "open_agent",
    "register_agent",
    "register_tool",
    "resolve_connection",
]

_HOME = {
    "AgentContext": "agentloom.agents.base",
    "AgentEvent": "agentloom.agents.base",
    "AgentFinished": "agentloom.agents.base",
    "AgentInput": "agentloom.agents.base",
    "AgentResult": "agentloom.agents.base",
    "AgentUsage": "agentloom.agents.base",
    "BaseAgent": "agentloom.agents.base",
    "MemoryResult": "agentloom.agents.base",
    "ReasoningDelta": "agentloom.agents.base",
    "StopReason": "agentloom.agents.base",
    "TextDelta": "agentloom.agents.base",
    "ToolFinished": "agentloom.agents.base",
    "ToolOutcome": "agentloom.agents.base",
    "ToolStarted": "agentloom.agents.base",
    "TurnStarted": "agentloom.agents.base",
    "AGENTS": "agentloom.agents.builders",
    "TOOLS": "agentloom.agents.builders",
    "AgentOptions": "agentloom.agents.builders",
    "ToolEnvironment": "agentloom.agents.builders",
    "build_agent": "agentloom.agents.builders",
    "build_tools": "agentloom.agents.builders",
    "CodeActAgent": "agentloom.agents.codeact",
    "Connection": "agentloom.agents.connection",
    "open_agent": "agentloom.agents.connection",
    "resolve_connection": "agentloom.agents.connection",
    "EventLogger": "agentloom.agents.event_logger",
    "LogLine": "agentloom.agents.event_logger",
    "ToolExecutor": "agentloom.agents.executor",
    "LoopGuard": "agentloom.agents.loop_guard",
    "OrchestratorAgent": "agentloom.agents.orchestrator",
    "ReactAgent": "agentloom.agents.react",
    "PluginError": "agentloom.agents.registry",
    "register_agent": "agentloom.agents.registry",
    "register_tool": "agentloom.agents.registry",
    "Repl": "agentloom.agents.repl",
    "ReplResult": "agentloom.agents.repl",
    "RLMAgent": "agentloom.agents.rlm",
    "SimpleAgent": "agentloom.agents.simple",
    "AgentRun": "agentloom.agents.tool_agent",
    "ToolUsingAgent": "agentloom.agents.tool_agent",
    "Tool": "agentloom.agents.tools.base",
    "ToolError": "agentloom.agents.tools.base",
    "function_tool": "agentloom.agents.tools.base",
    "ToolOutput": "agentloom.agents.turns",
    "TurnEvent": "agentloom.agents.turns",
    "TurnResult": "agentloom.agents.turns",
}


def __getattr__(name: str) -> Any:
    """``agentloom.agents.X``, imported from its module on first use."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'agentloom.agents' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value
