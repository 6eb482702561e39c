"""The Response object, with every field of OpenAI's ``Response`` type given a real value."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import Field

from agentloom.api.items import OutputItem, OutputMessage
from agentloom.api.prompts import ResponsePrompt
from agentloom.api.requests import ConversationRef, ReasoningConfig, TextConfig
from agentloom.api.tools import Tool, ToolChoice
from agentloom.api.wire import Nullable, WireModel

ResponseStatus = Literal["queued", "in_progress", "completed", "failed", "incomplete", "cancelled"]
IncompleteReason = Literal["max_output_tokens", "max_messages", "content_filter"]


class InputTokensDetails(WireModel):
    cached_tokens: int = 0
    cache_write_tokens: int = 0  # prompt-cache writes: backends behind agentloom report none


class OutputTokensDetails(WireModel):
    reasoning_tokens: int = 0


class ResponseUsage(WireModel):
    input_tokens: int = 0
    input_tokens_details: InputTokensDetails = Field(default_factory=InputTokensDetails)
    output_tokens: int = 0
    output_tokens_details: OutputTokensDetails = Field(default_factory=OutputTokensDetails)
    total_tokens: int = 0

    @classmethod
    def of(
        cls, input_tokens: int, output_tokens: int, *, cached: int = 0, reasoning: int = 0
    ) -> ResponseUsage:
        return cls(
            input_tokens=input_tokens,
            input_tokens_details=InputTokensDetails(cached_tokens=cached),
            output_tokens=output_tokens,
            output_tokens_details=OutputTokensDetails(reasoning_tokens=reasoning),
            total_tokens=input_tokens + output_tokens,
        )

    def add(self, other: ResponseUsage) -> ResponseUsage:
        return ResponseUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            input_tokens_details=InputTokensDetails(
                cached_tokens=self.input_tokens_details.cached_tokens
                + other.input_tokens_details.cached_tokens,
                cache_write_tokens=self.input_tokens_details.cache_write_tokens
                + other.input_tokens_details.cache_write_tokens,
            ),
            output_tokens=self.output_tokens + other.output_tokens,
            output_tokens_details=OutputTokensDetails(
                reasoning_tokens=self.output_tokens_details.reasoning_tokens
                + other.output_tokens_details.reasoning_tokens
            ),
            total_tokens=self.total_tokens + other.total_tokens,
        )


class ResponseError(WireModel):
    code: str
    message: str


class IncompleteDetails(WireModel):
    reason: IncompleteReason


class ModerationResult(WireModel):
    """What the moderation shield found in the response's input or output."""

    type: Literal["moderation_result"] = "moderation_result"
    model: str  # the shield that ran
    flagged: bool
    categories: dict[str, bool]
    category_scores: dict[str, float]
    category_applied_input_types: dict[str, list[Literal["text", "image"]]]


class ModerationFailure(WireModel):
    """The moderation shield could not run."""

    type: Literal["error"] = "error"
    code: str
    message: str


ModerationOutcome: TypeAlias = Annotated[
    ModerationResult | ModerationFailure, Field(discriminator="type")
]


class ResponseModeration(WireModel):
    input: ModerationOutcome
    output: ModerationOutcome


class Response(WireModel):
    id: str
    object: Literal["response"] = "response"
    created_at: int
    status: ResponseStatus
    access_programs: Nullable[dict[str, str]] = None  # required by the spec; none run here
    background: bool = False
    completed_at: Nullable[int] = None
    conversation: Nullable[ConversationRef] = None
    error: Nullable[ResponseError] = None
    incomplete_details: Nullable[IncompleteDetails] = None
    instructions: Nullable[str] = None
    max_output_tokens: Nullable[int] = None
    max_tool_calls: Nullable[int] = None
    max_infer_iters: int | None = None  # Llama Stack's extension, echoed when the request gave it
    metadata: dict[str, str] = Field(default_factory=dict)
    model: str
    moderation: Nullable[ResponseModeration] = None  # when the request asked for ``moderation``
    output: list[OutputItem] = Field(default_factory=list)
    parallel_tool_calls: bool = True
    previous_response_id: Nullable[str] = None
    prompt: Nullable[ResponsePrompt] = None
    prompt_cache_key: Nullable[str] = None
    prompt_cache_retention: Nullable[str] = None
    reasoning: ReasoningConfig = Field(default_factory=ReasoningConfig)
    safety_identifier: Nullable[str] = None
    service_tier: str = "default"
    store: bool = True
    temperature: float = 1.0
    text: TextConfig = Field(default_factory=TextConfig)
    tool_choice: ToolChoice = "auto"
    tools: list[Tool] = Field(default_factory=list)
    top_logprobs: int = 0
    top_p: float = 1.0
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    truncation: Literal["auto", "disabled"] = "disabled"
    usage: Nullable[ResponseUsage] = None
    user: str | None = None

    def output_text(self) -> str:
        return "".join(
            part.text
            for item in self.output
            if isinstance(item, OutputMessage)
            for part in item.content
            if part.type == "output_text"
        )


class DeletedResponse(WireModel):
    id: str
    object: Literal["response.deleted"] = "response.deleted"
    deleted: bool = True
