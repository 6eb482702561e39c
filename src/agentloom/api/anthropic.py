"""Anthropic's Messages API (``POST /v1/messages``, ``/v1/messages/count_tokens``): the request,
the Message it answers with, and the error envelope, as the ``anthropic`` package's types have
them. What the server cannot honour is refused by name (:data:`REFUSED`); fields it does not
know are ignored, as every wire model here ignores them.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, TypeAlias

from pydantic import Field, StrictBool, StrictStr

from agentloom.api.integers import Int32
from agentloom.api.wire import Nullable, WireModel

# Fields of Anthropic's request that a chat backend has no word for: a 400 names each.
REFUSED: Final = {
    "top_k": "top_k is not supported: the backends agentloom serves take temperature and top_p",
    "container": "containers of Anthropic's code execution tool are not supported",
    "mcp_servers": "Anthropic's MCP connector is not supported on /v1/messages",
}


class CacheControl(WireModel):
    type: str = "ephemeral"  # accepted and ignored: backends cache prefixes themselves


class TextBlock(WireModel):
    type: Literal["text"]
    text: StrictStr
    cache_control: CacheControl | None = None


class Base64Source(WireModel):
    type: Literal["base64"]
    media_type: StrictStr
    data: StrictStr


class UrlSource(WireModel):
    type: Literal["url"]
    url: StrictStr


class ImageBlock(WireModel):
    type: Literal["image"]
    source: Annotated[Base64Source | UrlSource, Field(discriminator="type")]
    cache_control: CacheControl | None = None


class ToolUseBlock(WireModel):
    type: Literal["tool_use"]
    id: StrictStr
    name: StrictStr
    input: dict[str, Any]
    cache_control: CacheControl | None = None


class ToolResultBlock(WireModel):
    type: Literal["tool_result"]
    tool_use_id: StrictStr
    content: StrictStr | list[Annotated[TextBlock | ImageBlock, Field(discriminator="type")]] = ""
    is_error: StrictBool | None = None
    cache_control: CacheControl | None = None


class ThinkingBlock(WireModel):
    type: Literal["thinking"]
    thinking: StrictStr
    signature: StrictStr = ""


class RedactedThinkingBlock(WireModel):
    type: Literal["redacted_thinking"]
    data: StrictStr


InputBlock: TypeAlias = Annotated[
    TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | RedactedThinkingBlock,
    Field(discriminator="type"),
]


class InputMessage(WireModel):
    role: Literal["user", "assistant", "system"]  # Claude Code puts system text between turns
    content: StrictStr | list[InputBlock]


class Tool(WireModel):
    name: StrictStr = Field(min_length=1, max_length=128)
    description: StrictStr | None = None
    input_schema: dict[str, Any]
    type: StrictStr | None = None  # "custom", or one of Anthropic's server tools (refused)
    cache_control: CacheControl | None = None


class ToolChoice(WireModel):
    type: Literal["auto", "any", "tool", "none"]
    name: StrictStr | None = None
    disable_parallel_tool_use: StrictBool | None = None


class Thinking(WireModel):
    type: Literal["enabled", "disabled", "adaptive"]
    budget_tokens: Int32 | None = None


class OutputConfig(WireModel):
    effort: Literal["low", "medium", "high", "max"] | None = None  # how hard to think


class RequestMetadata(WireModel):
    user_id: StrictStr | None = None


class CountTokensRequest(WireModel):
    model: StrictStr = Field(min_length=1)
    messages: list[InputMessage] = Field(min_length=1)
    system: StrictStr | list[TextBlock] | None = None
    tools: list[Tool] | None = None
    tool_choice: ToolChoice | None = None
    thinking: Thinking | None = None
    output_config: OutputConfig | None = None


class MessagesRequest(CountTokensRequest):
    max_tokens: Int32 = Field(ge=1)
    stream: StrictBool | None = None
    stop_sequences: list[StrictStr] | None = Field(default=None, max_length=16)
    temperature: float | None = Field(default=None, ge=0, le=1)
    top_p: float | None = Field(default=None, ge=0, le=1)
    metadata: RequestMetadata | None = None
    service_tier: StrictStr | None = None  # accepted and ignored
    top_k: Any = None  # refused (REFUSED)
    container: Any = None  # refused
    mcp_servers: Any = None  # refused

    def refused(self) -> str | None:
        """The first field given that the server cannot honour, if any."""
        return next((name for name in REFUSED if getattr(self, name) is not None), None)


# --- what the server answers -------------------------------------------------------------


class Usage(WireModel):
    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: Nullable[int] = 0
    cache_read_input_tokens: Nullable[int] = 0


class TextOut(WireModel):
    type: Literal["text"] = "text"
    text: str
    citations: Nullable[list[Any]] = None


class ThinkingOut(WireModel):
    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str = ""  # the backend's reasoning carries none


class ToolUseOut(WireModel):
    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any]


OutputBlock: TypeAlias = TextOut | ThinkingOut | ToolUseOut
StopReason: TypeAlias = Literal["end_turn", "max_tokens", "stop_sequence", "tool_use", "refusal"]


class Message(WireModel):
    id: str
    type: Literal["message"] = "message"
    role: Literal["assistant"] = "assistant"
    content: list[OutputBlock]
    model: str
    stop_reason: Nullable[StopReason] = None
    stop_sequence: Nullable[str] = None
    usage: Usage


class TokenCount(WireModel):
    input_tokens: int


class AnthropicErrorDetail(WireModel):
    type: str
    message: str


class AnthropicError(WireModel):
    """Anthropic's error body (its ``request_id`` is the ``request-id`` header)."""

    type: Literal["error"] = "error"
    error: AnthropicErrorDetail
