"""Client-side agents: strategies over an :class:`~agentloom.llm.LLM`, their tools, a registry."""

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
    "OrchestratorAgent",
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
    "resolve_connection",
]
