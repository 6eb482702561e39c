"""Wire models of the safety endpoints: ``/v1/shields``, ``/v1/safety/run-shield`` (Llama
Stack's shape) and ``/v1/moderations`` (OpenAI's)."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import Field

from agentloom.api.wire import Nullable, WireModel

InputType = Literal["text", "image"]


class ShieldObject(WireModel):
    id: str
    object: Literal["shield"] = "shield"
    type: str
    provider: str | None  # "agentloom" in-process, an endpoint URL; None: the model's provider
    model: str | None
    on_error: Literal["block", "allow"]
    timeout: float


class ShieldList(WireModel):
    object: Literal["list"] = "list"
    data: list[ShieldObject]


# --- run-shield --------------------------------------------------------------------------------


class TextContent(WireModel):
    type: Literal["text", "input_text", "output_text"]
    text: str


class ImageContent(WireModel):
    type: Literal["image", "image_url", "input_image"]


MessagePart: TypeAlias = Annotated[TextContent | ImageContent, Field(discriminator="type")]


class ShieldMessage(WireModel):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[MessagePart] | None = None


class RunShieldRequest(WireModel):
    shield_id: str
    messages: list[ShieldMessage] = Field(min_length=1)
    params: dict[str, object] | None = None  # accepted for compatibility; no shield takes any


class SafetyViolation(WireModel):
    violation_level: Literal["info", "warn", "error"] = "error"
    user_message: str | None
    metadata: dict[str, str | bool | list[str]]


class RunShieldResponse(WireModel):
    violation: Nullable[SafetyViolation]  # Llama Stack sends null when nothing was found


# --- moderations -------------------------------------------------------------------------------


class ModerationText(WireModel):
    type: Literal["text"]
    text: str


class ModerationImage(WireModel):
    type: Literal["image_url"]


ModerationPart: TypeAlias = Annotated[ModerationText | ModerationImage, Field(discriminator="type")]


class ModerationRequest(WireModel):
    input: str | list[str] | list[ModerationPart]
    model: str | None = None


class ModerationResult(WireModel):
    flagged: bool
    categories: dict[str, bool]
    category_scores: dict[str, float]
    category_applied_input_types: dict[str, list[InputType]]


class ModerationResponse(WireModel):
    id: str
    model: str
    results: list[ModerationResult]
