"""Content parts of messages, as the Responses API defines them."""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired, TypeAlias, get_args

from pydantic import ConfigDict, Field, field_validator, model_validator, with_config
from typing_extensions import TypedDict  # pydantic reads typing's only from Python 3.12

from agentloom.api.integers import Byte, Int32
from agentloom.api.wire import WireModel

ImageDetail: TypeAlias = Literal["low", "high", "auto", "original"]
IMAGE_DETAILS: tuple[str, ...] = get_args(ImageDetail)


class InputText(WireModel):
    type: Literal["input_text"] = "input_text"
    text: str


@with_config(ConfigDict(extra="forbid"))
class ImageUrlObject(TypedDict):
    """``image_url`` as an object, Chat Completions' shape (Llama Stack's examples send it):
    read as OpenAI's string, its ``detail`` as the part's (the schema of what is accepted; the
    validators of :class:`InputImage` read it)."""

    url: str
    detail: NotRequired[ImageDetail]


class InputImage(WireModel):
    type: Literal["input_image"] = "input_image"
    image_url: str | None = None
    file_id: str | None = None
    detail: ImageDetail = "auto"

    @model_validator(mode="before")
    @classmethod
    def _detail_of_url_object(cls, data: object) -> object:
        """An ``image_url`` object's ``detail`` becomes the part's, unless the part gives
        another or it is no detail (then it stays, and :meth:`_url_of_object` refuses it)."""
        if not isinstance(data, dict) or not isinstance(data.get("image_url"), dict):
            return data
        url = dict(data["image_url"])
        detail = url.get("detail")
        if detail in IMAGE_DETAILS and data.get("detail", detail) == detail:
            del url["detail"]
            return {**data, "detail": detail, "image_url": url}
        return data

    @field_validator("image_url", mode="before", json_schema_input_type=str | ImageUrlObject | None)
    @classmethod
    def _url_of_object(cls, value: object) -> object:
        """``{"url": ...}`` is stored and echoed as OpenAI's string; any other field of the
        object is refused by name."""
        if not isinstance(value, dict):
            return value
        unknown = [str(key) for key in value if key not in ("url", "detail")]
        if unknown:
            raise ValueError(f"an image_url object has only 'url' and 'detail', not '{unknown[0]}'")
        if "detail" in value:
            raise ValueError(_wrong_detail(value["detail"]))
        url = value.get("url")
        if not isinstance(url, str):
            raise ValueError("an image_url object needs 'url', a string")
        return url


def _wrong_detail(detail: object) -> str:
    if detail in IMAGE_DETAILS:
        return f"its 'detail' ({detail}) differs from the input_image's own 'detail'"
    return f"its 'detail' must be one of {', '.join(IMAGE_DETAILS)}"


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
