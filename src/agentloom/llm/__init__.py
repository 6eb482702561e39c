"""The SDK's LLM adapter: Chat Completions or Responses, one typed answer."""

from agentloom.llm.client import LLM
from agentloom.llm.condense import Condenser
from agentloom.llm.options import CallOptions, ReasoningSummary
from agentloom.llm.routing import CAPABILITIES, REASONING_MODELS, choose_path, is_reasoning_model
from agentloom.llm.state import ConversationState, LLMStateError, StateMode
from agentloom.llm.strict_schema import StrictSchemaError, strict_schema
from agentloom.llm.telemetry import LLMCall
from agentloom.llm.types import (
    Condensation,
    Content,
    FunctionTool,
    ImageContent,
    InvalidContentError,
    LLMCompleted,
    LLMEvent,
    LLMResponse,
    Message,
    MessageToolCall,
    Metrics,
    Path,
    ReasoningDeltaEvent,
    ReasoningItem,
    TextContent,
    TextDeltaEvent,
    ToolCallEvent,
    ToolCallOrigin,
)

__all__ = [
    "CAPABILITIES",
    "LLM",
    "REASONING_MODELS",
    "CallOptions",
    "Condensation",
    "Condenser",
    "Content",
    "ConversationState",
    "FunctionTool",
    "ImageContent",
    "InvalidContentError",
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
    "ReasoningSummary",
    "StateMode",
    "StrictSchemaError",
    "TextContent",
    "TextDeltaEvent",
    "ToolCallEvent",
    "ToolCallOrigin",
    "choose_path",
    "is_reasoning_model",
    "strict_schema",
]
