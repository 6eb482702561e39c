"""The body of ``POST /v1/responses``, validated with OpenAI's limits."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import ConfigDict, Discriminator, Field, Tag, field_validator

from agentloom.api.integers import Int32
from agentloom.api.items import InputItem
from agentloom.api.limits import at_most
from agentloom.api.metadata import Metadata
from agentloom.api.prompts import PromptParam
from agentloom.api.tools import ToolChoice, Tools
from agentloom.api.wire import Nullable, WireModel

KNOWN_INCLUDES = frozenset(
    {
        "message.output_text.logprobs",
        "reasoning.encrypted_content",
        "message.input_image.image_url",
        "file_search_call.results",
        "web_search_call.action.sources",
        "web_search_call.results",
        "code_interpreter_call.outputs",
        "computer_call_output.output.image_url",
    }
)


class TextFormatText(WireModel):
    type: Literal["text"] = "text"


class TextFormatJsonObject(WireModel):
    type: Literal["json_object"] = "json_object"


class TextFormatJsonSchema(WireModel):
    # Echoed under its wire name ``schema`` (``schema_`` is only the attribute), which the
    # OpenAPI document's answer schema says too.
    model_config = ConfigDict(serialize_by_alias=True)

    type: Literal["json_schema"] = "json_schema"
    name: str = Field(min_length=1, max_length=64, pattern=r"^[a-zA-Z0-9_\-]+$")
    schema_: dict[str, object] = Field(alias="schema")
    description: Nullable[str] = None
    strict: bool = False


TextFormat: TypeAlias = Annotated[
    TextFormatText | TextFormatJsonObject | TextFormatJsonSchema, Field(discriminator="type")
]


class TextConfig(WireModel):
    format: TextFormat = Field(default_factory=TextFormatText)
    verbosity: Nullable[Literal["low", "medium", "high"]] = "medium"


class ReasoningConfig(WireModel):
    effort: Nullable[Literal["none", "minimal", "low", "medium", "high", "xhigh"]] = None
    summary: Nullable[Literal["auto", "concise", "detailed"]] = None


class ContextManagement(WireModel):
    """``{"type": "compaction", "compact_threshold": N}``: compact the input above N tokens."""

    type: Literal["compaction"]
    compact_threshold: Int32 | None = Field(default=None, ge=1)


class ConversationRef(WireModel):
    id: str


class ModerationModePolicy(WireModel):
    mode: Literal["score", "block"]


class ModerationPolicy(WireModel):
    input: ModerationModePolicy | None = None
    output: ModerationModePolicy | None = None


class ModerationParam(WireModel):
    """OpenAI's ``moderation``: run ``model`` on the input and the output; ``score`` only
    reports (``response.moderation``), ``block`` also refuses like a guardrail."""

    model: str = Field(min_length=1)
    policy: ModerationPolicy | None = None


def _input_tag(value: object) -> str:
    return "~text" if isinstance(value, str) else "~items"


class GuardrailSpec(WireModel):
    """Llama Stack's ``ResponseGuardrailSpec``: a guardrail named by its ``type`` (a shield id),
    the same as the id given as a string. It has no other field: any other is refused by name."""

    model_config = ConfigDict(extra="forbid")

    type: str = Field(min_length=1)


def _guardrail_tag(value: object) -> str:
    return "~id" if isinstance(value, str) else "~spec"


Guardrail: TypeAlias = Annotated[
    Annotated[str, Tag("~id")] | Annotated[GuardrailSpec, Tag("~spec")],
    Discriminator(_guardrail_tag),
]


Input: TypeAlias = Annotated[
    Annotated[str, Tag("~text")]
    | Annotated[list[InputItem], at_most("max_input_items"), Tag("~items")],
    Discriminator(_input_tag),
]


class CreateResponseRequest(WireModel):
    model: str = Field(min_length=1)
    input: Input = Field(default_factory=list)
    instructions: str | None = None
    previous_response_id: str | None = None
    conversation: str | ConversationRef | None = None
    tools: Tools = Field(default_factory=list)
    tool_choice: ToolChoice = "auto"
    parallel_tool_calls: bool = True
    max_tool_calls: Int32 | None = Field(default=None, ge=1)
    max_output_tokens: Int32 | None = Field(default=None, ge=16)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    top_logprobs: int | None = Field(default=None, ge=0, le=20)
    text: TextConfig = Field(default_factory=TextConfig)
    reasoning: ReasoningConfig | None = None
    truncation: Literal["auto", "disabled"] = "disabled"
    context_management: list[ContextManagement] | None = Field(default=None, max_length=1)
    metadata: Metadata | None = None
    include: list[str] = Field(default_factory=list)
    store: bool = True
    stream: bool = False
    background: bool = False
    prompt: PromptParam | None = None
    prompt_cache_key: str | None = Field(default=None, max_length=1024)
    safety_identifier: str | None = Field(default=None, max_length=256)
    service_tier: Literal["auto", "default", "flex", "scale", "priority"] | None = None
    user: str | None = None
    # Llama Stack's extensions: the shields checked on this response (ids or ``{"type": id}``),
    # and the model calls it may make (at most the server's ``[engine] max_model_calls``, its
    # default when left out)
    guardrails: list[Guardrail] | None = None
    max_infer_iters: Int32 | None = Field(default=None, ge=1)
    moderation: ModerationParam | None = None

    @field_validator("include")
    @classmethod
    def _known_includes(cls, value: list[str]) -> list[str]:
        unknown = [v for v in value if v not in KNOWN_INCLUDES]
        if unknown:
            raise ValueError(f"unknown include value(s): {', '.join(unknown)}")
        return value

    def requested_shields(self) -> list[tuple[str, str]]:
        """The shield ids ``guardrails`` names, in order, each with where it was given
        (``guardrails[0]``, or ``guardrails[1].type`` for a spec)."""
        return [
            (g, f"guardrails[{i}]") if isinstance(g, str) else (g.type, f"guardrails[{i}].type")
            for i, g in enumerate(self.guardrails or ())
        ]

    def conversation_id(self) -> str | None:
        if isinstance(self.conversation, ConversationRef):
            return self.conversation.id
        return self.conversation
