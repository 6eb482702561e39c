"""``POST /v1/responses/input_tokens``: the would-be request, and its count."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentloom.api.requests import (
    ConversationRef,
    CreateResponseRequest,
    Input,
    ReasoningConfig,
    TextConfig,
)
from agentloom.api.tools import ToolChoice, Tools
from agentloom.api.wire import WireModel


class InputTokensRequest(WireModel):
    """The fields of a create request that shape its input (``model`` may be left out when the
    server serves one model)."""

    model: str | None = Field(default=None, min_length=1)
    input: Input = Field(default_factory=list)
    instructions: str | None = None
    previous_response_id: str | None = None
    conversation: str | ConversationRef | None = None
    tools: Tools = Field(default_factory=list)
    tool_choice: ToolChoice = "auto"
    parallel_tool_calls: bool = True
    text: TextConfig = Field(default_factory=TextConfig)
    reasoning: ReasoningConfig | None = None
    truncation: Literal["auto", "disabled"] = "disabled"

    def as_create(self, model: str) -> CreateResponseRequest:
        fields = self.model_dump(exclude={"model"}, exclude_unset=True, by_alias=True)
        return CreateResponseRequest.model_validate({**fields, "model": model, "store": False})


class InputTokenCount(WireModel):
    object: Literal["response.input_tokens"] = "response.input_tokens"
    input_tokens: int
