"""Content parts of messages, as the Responses API defines them."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import Field, field_validator

from agentloom.api.integers import Byte, Int32
from agentloom.api.wire import WireModel


class InputText(WireModel):
    type: Literal["input_text"] = "input_text"
    text: str


class InputImage(WireModel):
    type: Literal["input_image"] = "input_image"
    image_url: str | None = None
    file_id: str | None = None
    detail: Literal["low", "high", "auto", "original"] = "auto"


class InputFile(WireModel):
    type: Literal["input_file"] = "input_file"
    file_data: str | None = None
    file_url: str | None = None
    file_id: str | None = None
    filename: str | None = None


class TopLogprob(WireModel):
    token: str
    logprob: float
    bytes: list[Byte] = Field(default_factory=list)


class Logprob(WireModel):
    token: str
    logprob: float
    bytes: list[Byte] = Field(default_factory=list)
    top_logprobs: list[TopLogprob] = Field(default_factory=list)


class FileCitation(WireModel):
    """A file the text at ``index`` draws on (file_search)."""

    type: Literal["file_citation"] = "file_citation"
    file_id: str
    filename: str
    index: Int32


class URLCitation(WireModel):
    type: Literal["url_citation"] = "url_citation"
    url: str
    title: str
    start_index: Int32
    end_index: Int32


class ContainerFileCitation(WireModel):
    type: Literal["container_file_citation"] = "container_file_citation"
    container_id: str
    file_id: str
    filename: str
    start_index: Int32
    end_index: Int32


class FilePath(WireModel):
    type: Literal["file_path"] = "file_path"
    file_id: str
    index: Int32


Annotation: TypeAlias = Annotated[
    FileCitation | URLCitation | ContainerFileCitation | FilePath, Field(discriminator="type")
]


class OutputText(WireModel):
    type: Literal["output_text"] = "output_text"
    text: str
    annotations: list[Annotation] = Field(default_factory=list)
    logprobs: list[Logprob] = Field(default_factory=list)

    @field_validator("logprobs", mode="before")
    @classmethod
    def _none_is_empty(cls, value: object) -> object:
        """``null`` (what responses stored before the wire rule held) reads as ``[]``."""
        return [] if value is None else value


class Refusal(WireModel):
    type: Literal["refusal"] = "refusal"
    refusal: str


class ReasoningText(WireModel):
    type: Literal["reasoning_text"] = "reasoning_text"
    text: str


class SummaryText(WireModel):
    type: Literal["summary_text"] = "summary_text"
    text: str


InputContent: TypeAlias = Annotated[InputText | InputImage | InputFile, Field(discriminator="type")]
OutputContent: TypeAlias = Annotated[OutputText | Refusal, Field(discriminator="type")]
MessageContent: TypeAlias = Annotated[
    InputText | InputImage | InputFile | OutputText | Refusal, Field(discriminator="type")
]
