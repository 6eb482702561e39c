"""The SDK's typed vocabulary: messages, tools, one response type and the streamed events.

Both wire paths (Chat Completions and Responses) read and write these types, so agent code never
knows which path a model uses.
"""

from __future__ import annotations

import base64
import json
import mimetypes
from collections.abc import Sequence
from dataclasses import field, replace
from pathlib import Path as FilePath
from typing import TYPE_CHECKING, Literal, TypeAlias

from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.json_types import JSONObject

if TYPE_CHECKING:
    from openai.types.responses import Response, ResponseFunctionToolCall

    from agentloom.inference.base import Chunk, ToolCallDelta

__all__ = [
    "Condensation",
    "Content",
    "FunctionTool",
    "ImageContent",
    "InvalidContentError",
    "LLMCompleted",
    "LLMEvent",
    "LLMResponse",
    "Message",
    "MessageToolCall",
    "Metrics",
    "Path",
    "RawResponse",
    "RawToolCall",
    "ReasoningDeltaEvent",
    "ReasoningItem",
    "Role",
    "TextContent",
    "TextDeltaEvent",
    "ToolCallEvent",
    "ToolCallOrigin",
]

Role = Literal["system", "developer", "user", "assistant", "tool"]
Path = Literal["completions", "responses"]
ToolCallOrigin = Literal["completion", "responses"]

if TYPE_CHECKING:
    RawToolCall: TypeAlias = ResponseFunctionToolCall | tuple[ToolCallDelta, ...]
    """The provider's own tool call: the Responses item, or the Chat Completions deltas."""
    RawResponse: TypeAlias = Response | tuple[Chunk, ...]
    """The provider's own answer: the Responses ``Response``, or the Chat Completions chunks."""
else:  # the real types need the openai package, which the SDK imports only when it is used
    RawToolCall = object
    RawResponse = object


# --- content ---------------------------------------------------------------------------------


class InvalidContentError(InvalidRequestError, ValueError):
    """A message's content cannot be sent (an image URL that is not one, an image in a message
    whose role takes only text)."""


@frozen
class TextContent:
    text: str
    type: Literal["text"] = "text"


_DETAILS = ("low", "high", "auto")


@frozen
class ImageContent:
    """An image the model looks at: an ``http(s)`` URL or a ``data:image/...;base64,`` URL.

    ``detail`` is OpenAI's resolution hint. :meth:`from_bytes` and :meth:`from_file` build the
    data URL for an image at hand.
    """

    url: str = field(repr=False)
    detail: Literal["low", "high", "auto"] = "auto"
    type: Literal["image"] = "image"

    def __post_init__(self) -> None:
        if self.detail not in _DETAILS:
            raise InvalidContentError(
                f"image detail must be one of {', '.join(_DETAILS)}, got {self.detail!r}",
                param="detail",
            )
        if self.url.startswith(("http://", "https://")):
            return
        if not self.url.startswith("data:"):
            raise InvalidContentError(
                f"an image URL must be http(s) or a data URL, got {self.url[:40]!r}", param="url"
            )
        _check_data_url(self.url)

    @classmethod
    def from_bytes(
        cls,
        data: bytes,
        media_type: str = "image/png",
        detail: Literal["low", "high", "auto"] = "auto",
    ) -> ImageContent:
        encoded = base64.b64encode(data).decode("ascii")
        return cls(f"data:{media_type};base64,{encoded}", detail)

    @classmethod
    def from_file(
        cls, path: str | FilePath, detail: Literal["low", "high", "auto"] = "auto"
    ) -> ImageContent:
        """The image in file ``path``, its media type guessed from the file name."""
        media_type, _ = mimetypes.guess_type(str(path))
        if media_type is None or not media_type.startswith("image/"):
            raise InvalidContentError(f"{path} is not named like an image file", param="path")
        return cls.from_bytes(FilePath(path).read_bytes(), media_type, detail)

    def __repr__(self) -> str:
        shown = self.url if len(self.url) <= 60 else f"{self.url[:48]}...({len(self.url)} chars)"
        return f"ImageContent(url={shown!r}, detail={self.detail!r})"


def _check_data_url(url: str) -> None:
    head, comma, payload = url.partition(",")
    if not comma or not head.startswith("data:image/") or not head.endswith(";base64"):
        raise InvalidContentError(
            "an image data URL must look like data:image/<type>;base64,<data>", param="url"
        )
    try:
        base64.b64decode(payload, validate=True)
    except ValueError:
        raise InvalidContentError(
            "an image data URL's payload is not base64", param="url"
        ) from None
    if not payload:
        raise InvalidContentError("an image data URL has no data", param="url")


Content: TypeAlias = TextContent | ImageContent


def _content(content: str | Sequence[Content] | None) -> str | tuple[Content, ...] | None:
    if content is None or isinstance(content, str):
        return content
    return tuple(content)


# --- messages --------------------------------------------------------------------------------


@frozen
class MessageToolCall:
    """A tool call as the model made it: the provider's ``call_id``, the name, JSON arguments.

    ``origin`` says which API produced it and ``raw`` keeps the provider's own object
    (:data:`RawToolCall`); neither takes part in equality, so a call is the same call whichever
    path it came from, and ``raw`` is left out of ``repr``.
    """

    call_id: str
    name: str
    arguments: str = "{}"
    origin: ToolCallOrigin | None = field(default=None, compare=False)
    raw: RawToolCall | None = field(default=None, compare=False, repr=False)

    def parsed_arguments(self) -> JSONObject:
        """The arguments as a JSON object; ``ValueError`` says why they are not one."""
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError as exc:
            raise ValueError(f"arguments are not valid JSON: {exc.msg} (at {exc.pos})") from None
        if not isinstance(value, dict):
            raise ValueError(f"arguments must be a JSON object, got {type(value).__name__}")
        return value


@frozen
class ReasoningItem:
    """A Responses ``reasoning`` item, kept so stateless mode can replay it verbatim.

    ``item`` is the item exactly as the server returned it; ``encrypted_content`` is never
    shown by ``repr`` (it must not reach logs).
    """

    id: str
    summary: tuple[str, ...] = ()
    encrypted_content: str | None = field(default=None, repr=False)
    item: JSONObject = field(default_factory=dict, repr=False, compare=False)


@frozen
class Message:
    """One conversation message.

    ``content`` is a string or a sequence of :class:`TextContent` and :class:`ImageContent`
    parts (images in user messages only: it is what both APIs accept). Assistant messages may
    carry ``tool_calls``, ``reasoning`` (text) and ``reasoning_items`` (Responses items to
    replay); tool messages carry ``tool_call_id`` (and the tool's ``name``).
    """

    role: Role
    content: str | tuple[Content, ...] | None = None
    tool_calls: tuple[MessageToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    reasoning: str | None = None
    reasoning_items: tuple[ReasoningItem, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.content, str | None | tuple):
            object.__setattr__(self, "content", _content(self.content))
        parts = self.content if isinstance(self.content, tuple) else ()
        if self.role != "user" and any(isinstance(p, ImageContent) for p in parts):
            raise InvalidContentError(
                f"a {self.role} message cannot hold an image: both APIs take images from the "
                "user only",
                param="content",
            )

    @property
    def parts(self) -> tuple[Content, ...]:
        """The content as parts (a string is one text part)."""
        if self.content is None:
            return ()
        if isinstance(self.content, str):
            return (TextContent(self.content),)
        return self.content

    @property
    def text(self) -> str:
        """The text of the content (its text parts, joined); ``""`` when there is none."""
        if isinstance(self.content, str):
            return self.content
        return "".join(p.text for p in self.parts if isinstance(p, TextContent))

    def without_raw(self) -> Message:
        """This message without the provider's objects on its tool calls (to send or store)."""
        if not any(call.raw is not None for call in self.tool_calls):
            return self
        calls = tuple(replace(call, raw=None) for call in self.tool_calls)
        return replace(self, tool_calls=calls)

    @classmethod
    def system(cls, content: str | Sequence[Content]) -> Message:
        return cls("system", _content(content))

    @classmethod
    def developer(cls, content: str | Sequence[Content]) -> Message:
        return cls("developer", _content(content))

    @classmethod
    def user(cls, content: str | Sequence[Content]) -> Message:
        """A user message: a string, or text and image parts, e.g.
        ``Message.user([TextContent("What is this?"), ImageContent(url)])``."""
        return cls("user", _content(content))

    @classmethod
    def assistant(
        cls, content: str | None = None, tool_calls: tuple[MessageToolCall, ...] = ()
    ) -> Message:
        return cls("assistant", content, tool_calls)

    @classmethod
    def tool(cls, call_id: str, content: str, name: str | None = None) -> Message:
        return cls("tool", content, tool_call_id=call_id, name=name)


@frozen
class FunctionTool:
    """A function the model may call; ``parameters`` is a JSON schema object.

    ``strict`` ``None`` (the default) is each path's default: strict on the Responses path (the
    schema made strict-compatible, :mod:`agentloom.llm.strict_schema`; a schema that cannot be
    is sent as it is, with a warning), as it is on Chat Completions. ``True`` makes it strict on
    both paths (a schema that cannot be is an error), ``False`` sends it as it is.
    """

    name: str
    description: str = ""
    parameters: JSONObject = field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool | None = None


@frozen
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
    # the server reported no usage: the token counts are an estimate (about four characters a
    # token, agentloom.inference.estimate), not the backend's count
    tokens_estimated: bool = False

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@frozen
class Condensation:
    """What the condenser did to a call (:mod:`agentloom.llm.condense`): ``summary`` stands for
    the ``replaced`` oldest messages; ``messages`` is the history sent instead of the caller's,
    the one to continue from."""

    summary: str
    replaced: int
    messages: tuple[Message, ...]


@frozen
class LLMResponse:
    """One model call's answer, the same on both paths.

    ``raw_response`` is the provider's own answer (:data:`RawResponse`): the ``openai``
    ``Response`` on the Responses path, the chunks the provider streamed on Chat Completions. It
    takes no part in equality or ``repr``.
    """

    message: Message
    metrics: Metrics
    finish_reason: str | None = None
    response_id: str | None = None  # the Responses path's response id
    model: str | None = None  # the model that answered, as the server names it (if it says)
    raw_response: RawResponse | None = field(default=None, compare=False, repr=False)
    condensation: Condensation | None = None  # set when the history was condensed to fit

    @property
    def text(self) -> str:
        return self.message.text

    def without_raw(self) -> LLMResponse:
        """This answer without the provider's objects (to send or store)."""
        return replace(self, message=self.message.without_raw(), raw_response=None)

    @property
    def tool_calls(self) -> tuple[MessageToolCall, ...]:
        return self.message.tool_calls

    @property
    def reasoning(self) -> str | None:
        return self.message.reasoning


# --- streamed events -------------------------------------------------------------------------


@frozen
class TextDeltaEvent:
    text: str
    type: Literal["text_delta"] = "text_delta"


@frozen
class ReasoningDeltaEvent:
    text: str
    type: Literal["reasoning_delta"] = "reasoning_delta"


@frozen
class ToolCallEvent:
    """A tool call, complete (sent once its arguments have all arrived)."""

    call: MessageToolCall
    type: Literal["tool_call"] = "tool_call"


@frozen
class LLMCompleted:
    """The last event of every stream: the whole response."""

    response: LLMResponse
    type: Literal["completed"] = "completed"


LLMEvent: TypeAlias = TextDeltaEvent | ReasoningDeltaEvent | ToolCallEvent | LLMCompleted
