"""The SDK's LLM adapter: Chat Completions or Responses, one typed answer."""

from agentloom.llm.client import LLM
from agentloom.llm.options import CallOptions
from agentloom.llm.routing import CAPABILITIES, choose_path
from agentloom.llm.state import ConversationState, LLMStateError, StateMode
from agentloom.llm.telemetry import LLMCall
from agentloom.llm.types import (
    FunctionTool,
    LLMCompleted,
    LLMEvent,
    LLMResponse,
    Message,
    MessageToolCall,
    Metrics,
    Path,
    ReasoningDeltaEvent,
    ReasoningItem,
    TextDeltaEvent,
    ToolCallEvent,
)

__all__ = [
    "CAPABILITIES",
    "LLM",
    "CallOptions",
    "ConversationState",
    "FunctionTool",
    "LLMCall",
    "LLMCompleted",
    "LLMEvent",
    "LLMResponse",
    "LLMStateError",
    "Message",
    "MessageToolCall",
    "Metrics",
    "Path",
    "ReasoningDeltaEvent",
    "ReasoningItem",
    "StateMode",
    "TextDeltaEvent",
    "ToolCallEvent",
    "choose_path",
]
