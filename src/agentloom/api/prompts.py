"""The prompts API's wire models: versioned prompt templates (shaped after Llama Stack's prompts
API), and the ``prompt`` a response request names (OpenAI's ``ResponsePrompt``)."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import AfterValidator, Discriminator, Field, StrictStr, Tag

from agentloom.api.content import InputContent
from agentloom.api.integers import INT32_MAX, StrictInt32
from agentloom.api.metadata import Metadata
from agentloom.api.wire import WireModel

MAX_VERSION = INT32_MAX  # versions live in a 32-bit integer column


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("the prompt template must not be empty")
    return value


Template: TypeAlias = Annotated[str, AfterValidator(_not_blank)]
Version: TypeAlias = Annotated[int, Field(ge=1, le=MAX_VERSION)]


class Prompt(WireModel):
    """One version of a prompt."""

    object: Literal["prompt"] = "prompt"
    id: str
    version: int
    prompt: str
    variables: list[str]
    is_default: bool
    created_at: int
    metadata: dict[str, str] = Field(default_factory=dict)


class DeletedPrompt(WireModel):
    id: str
    object: Literal["prompt.deleted"] = "prompt.deleted"
    deleted: bool = True


class CreatePromptRequest(WireModel):
    prompt: Template
    variables: list[str] | None = None
    metadata: Metadata | None = None


class UpdatePromptRequest(WireModel):
    """A new version. ``version`` is the one the caller last saw: it must still be the latest.
    ``metadata`` omitted keeps that version's metadata."""

    prompt: Template
    variables: list[str] | None = None
    version: Version
    set_as_default: bool = True
    metadata: Metadata | None = None


class SetDefaultVersionRequest(WireModel):
    version: Version


def _value_tag(value: object) -> str:
    return "~text" if isinstance(value, str) else "~part"


PromptVariable: TypeAlias = Annotated[
    Annotated[str, Tag("~text")] | Annotated[InputContent, Tag("~part")],
    Discriminator(_value_tag),
]
"""A variable's value: a string, or an ``input_text`` / ``input_image`` / ``input_file`` part."""


class PromptParam(WireModel):
    """The ``prompt`` of ``POST /v1/responses``: a prompt, its version (the default when
    omitted), and a value for each of its variables."""

    id: str
    version: StrictStr | StrictInt32 | None = None
    variables: dict[str, PromptVariable] | None = None


class ResponsePrompt(WireModel):
    """The ``prompt`` a Response echoes: ``version`` is the version used."""

    id: str
    version: str | None = None
    variables: dict[str, PromptVariable] = Field(default_factory=dict)

    @classmethod
    def echo(cls, param: PromptParam | None) -> ResponsePrompt | None:
        if param is None:
            return None
        version = None if param.version is None else str(param.version)
        return cls(id=param.id, version=version, variables=param.variables or {})
