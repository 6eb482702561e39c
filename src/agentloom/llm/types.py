"""The SDK's typed vocabulary: messages, tools, one response type and the streamed events.

Both wire paths (Chat Completions and Responses) read and write these types, so agent code never
knows which path a model uses.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from agentloom.json_types import JSONObject

__all__ = [
    "FunctionTool",
    "LLMCompleted",
    "LLMEvent",
    "LLMResponse",
    "Message",
    "MessageToolCall",
    "Metrics",
    "Path",
    "ReasoningDeltaEvent",
    "ReasoningItem",
    "Role",
    "TextDeltaEvent",
    "ToolCallEvent",
]

Role = Literal["system", "developer", "user", "assistant", "tool"]
Path = Literal["completions", "responses"]


@dataclass(frozen=True, slots=True)
class MessageToolCall:
    """A tool call as the model made it: the provider's ``call_id``, the name, JSON arguments."""

    call_id: str
    name: str
    arguments: str = "{}"

    def parsed_arguments(self) -> JSONObject:
        """The arguments as a JSON object; ``ValueError`` says why they are not one."""
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError as exc:
            raise ValueError(f"arguments are not valid JSON: {exc.msg} (at {exc.pos})") from None
        if not isinstance(value, dict):
            raise ValueError(f"arguments must be a JSON object, got {type(value).__name__}")
        return value


@dataclass(frozen=True, slots=True)
class ReasoningItem:
    """A Responses ``reasoning`` item, kept so stateless mode can replay it verbatim.

    ``item`` is the item exactly as the server returned it; ``encrypted_content`` is never
    shown by ``repr`` (it must not reach logs).
    """

    id: str
    summary: tuple[str, ...] = ()
    encrypted_content: str | None = field(default=None, repr=False)
    item: JSONObject = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class Message:
    """One conversation message.

    Assistant messages may carry ``tool_calls``, ``reasoning`` (text) and ``reasoning_items``
    (Responses items to replay); tool messages carry ``tool_call_id`` (and the tool's ``name``).
    """

    role: Role
    content: str | None = None
    tool_calls: tuple[MessageToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    reasoning: str | None = None
    reasoning_items: tuple[ReasoningItem, ...] = ()

    @classmethod
    def system(cls, content: str) -> Message:
        return cls("system", content)

    @classmethod
    def developer(cls, content: str) -> Message:
        return cls("developer", content)

    @classmethod
    def user(cls, content: str) -> Message:
        return cls("user", content)

    @classmethod
    def assistant(
        cls, content: str | None = None, tool_calls: tuple[MessageToolCall, ...] = ()
    ) -> Message:
        return cls("assistant", content, tool_calls)

    @classmethod
    def tool(cls, call_id: str, content: str, name: str | None = None) -> Message:
        return cls("tool", content, tool_call_id=call_id, name=name)


@dataclass(frozen=True, slots=True)
class FunctionTool:
    """A function the model may call; ``parameters`` is a JSON schema object."""

    name: str
    description: str = ""
    parameters: JSONObject = field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool = False


@dataclass(frozen=True, slots=True)
class Metrics:
    """What one model call cost and how it went."""

    path: Path
    model: str
    latency_ms: float
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    time_to_first_token_ms: float | None = None

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class LLMResponse:
    """One model call's answer, the same on both paths."""

    message: Message
    metrics: Metrics
    finish_reason: str | None = None
    response_id: str | None = None  # the Responses path's response id
    model: str | None = None  # the model that answered, as the server names it (if it says)

    @property
    def text(self) -> str:
        return self.message.content or ""

    @property
    def tool_calls(self) -> tuple[MessageToolCall, ...]:
        return self.message.tool_calls

    @property
    def reasoning(self) -> str | None:
        return self.message.reasoning


# --- streamed events -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextDeltaEvent:
    text: str
    type: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True, slots=True)
class ReasoningDeltaEvent:
    text: str
    type: Literal["reasoning_delta"] = "reasoning_delta"


@dataclass(frozen=True, slots=True)
class ToolCallEvent:
    """A tool call, complete (sent once its arguments have all arrived)."""

    call: MessageToolCall
    type: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True)
class LLMCompleted:
    """The last event of every stream: the whole response."""

    response: LLMResponse
    type: Literal["completed"] = "completed"


LLMEvent: TypeAlias = TextDeltaEvent | ReasoningDeltaEvent | ToolCallEvent | LLMCompleted
