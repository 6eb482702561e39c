"""The inference seam: a streamed chat completion in, typed chunks out.

Everything a provider needs is in :class:`ChatRequest`; everything it yields is a :data:`Chunk`.
Providers raise only :mod:`agentloom.errors` upstream errors, never HTTP or vendor types.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import field
from typing import Literal, Protocol, TypeAlias, cast, runtime_checkable

from agentloom.frozen import frozen
from agentloom.inference.deadlines import StreamDeadlines
from agentloom.json_types import JSONObject, JSONValue

Role = Literal["system", "user", "assistant", "tool"]
FinishReason = Literal["stop", "length", "tool_calls", "content_filter"]


# --- request ---------------------------------------------------------------------------------


@frozen
class TextPart:
    text: str
    type: Literal["text"] = "text"


@frozen
class ImagePart:
    url: str  # http(s) URL or data URL
    detail: Literal["low", "high", "auto"] = "auto"
    type: Literal["image"] = "image"


@frozen
class FilePart:
    filename: str | None
    data: str | None  # data URL / base64 payload
    url: str | None = None
    type: Literal["file"] = "file"


ContentPart: TypeAlias = TextPart | ImagePart | FilePart


@frozen
class ToolCall:
    """A complete tool call, as the model made it (assembled from deltas)."""

    id: str
    name: str
    arguments: str


@frozen
class ChatMessage:
    """One chat-completions message.

    ``content`` is a string or parts (user messages); assistant messages may carry ``tool_calls``
    and ``reasoning`` (the backend's own reasoning text, given back to backends that accept it);
    tool messages carry ``tool_call_id``.
    """

    role: Role
    content: str | tuple[ContentPart, ...] | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    reasoning: str | None = None


@frozen
class FunctionSpec:
    name: str
    description: str | None
    parameters: JSONObject
    strict: bool = False


@frozen
class NamedToolChoice:
    name: str


ToolChoice: TypeAlias = Literal["auto", "none", "required"] | NamedToolChoice


@frozen
class JsonSchemaFormat:
    name: str
    schema: JSONObject
    strict: bool = False
    description: str | None = None


ResponseFormat: TypeAlias = Literal["text", "json_object"] | JsonSchemaFormat


@frozen
class ChatRequest:
    model: str  # the backend's own model id
    messages: tuple[ChatMessage, ...]
    tools: tuple[FunctionSpec, ...] = ()
    tool_choice: ToolChoice | None = None
    parallel_tool_calls: bool | None = None
    temperature: float | None = None
    top_p: float | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    max_tokens: int | None = None
    top_logprobs: int | None = None
    response_format: ResponseFormat = "text"
    reasoning_effort: str | None = None
    user: str | None = None
    prompt_cache_key: str | None = None
    safety_identifier: str | None = None
    service_tier: str | None = None
    stop: tuple[str, ...] = ()  # sequences that end the answer where they would appear
    metadata: Mapping[str, str] | None = None  # OpenAI's metadata pairs, sent as they are
    extra_body: Mapping[str, JSONValue] | None = None  # merged into the JSON body last
    # The answer is collected whole (no one sees its deltas): a provider may ask the backend
    # for it whole instead of streamed.
    collected: bool = False

    def calling(
        self, messages: tuple[ChatMessage, ...], max_tokens: int | None, collected: bool
    ) -> ChatRequest:
        """This request with a model call's own ``messages``, ``max_tokens`` and ``collected``:
        ``dataclasses.replace`` at a fifth of its cost (the agent loop makes one a call)."""
        return ChatRequest(
            self.model,
            messages,
            self.tools,
            self.tool_choice,
            self.parallel_tool_calls,
            self.temperature,
            self.top_p,
            self.presence_penalty,
            self.frequency_penalty,
            max_tokens,
            self.top_logprobs,
            self.response_format,
            self.reasoning_effort,
            self.user,
            self.prompt_cache_key,
            self.safety_identifier,
            self.service_tier,
            self.stop,
            self.metadata,
            self.extra_body,
            collected,
        )


# --- chunks ----------------------------------------------------------------------------------


@frozen
class TopLogprob:
    token: str
    logprob: float
    bytes: tuple[int, ...] | None = None


@frozen
class TokenLogprob:
    token: str
    logprob: float
    bytes: tuple[int, ...] | None = None
    top_logprobs: tuple[TopLogprob, ...] = ()


@frozen
class TextDelta:
    text: str
    logprobs: tuple[TokenLogprob, ...] = ()
    type: Literal["text"] = "text"


@frozen
class RefusalDelta:
    text: str
    type: Literal["refusal"] = "refusal"


@frozen
class ReasoningDelta:
    text: str
    type: Literal["reasoning"] = "reasoning"


@frozen
class ToolCallDelta:
    """A fragment of tool call ``index``: ``id`` and ``name`` arrive once, arguments in pieces."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    type: Literal["tool_call"] = "tool_call"


@frozen
class Finish:
    reason: FinishReason
    type: Literal["finish"] = "finish"


@frozen
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    type: Literal["usage"] = "usage"


Chunk: TypeAlias = TextDelta | RefusalDelta | ReasoningDelta | ToolCallDelta | Finish | Usage


# --- the seam --------------------------------------------------------------------------------


@frozen
class ModelInfo:
    id: str
    created: int = 0
    owned_by: str = "agentloom"
    context_window: int | None = None


ModelKind = Literal["chat", "embeddings"]  # the API a model is served on
HTTPClientKind = Literal["auto", "lean", "sdk"]
TokenCountMethod = Literal["tokenizer", "usage", "estimate"]
TokenCountSetting = Literal["auto", "tokenize", "usage", "estimate"]


@frozen
class TokenCount:
    """The input tokens of a request, and how they were counted.

    ``tokenizer``: the model's own tokenizer and chat template; ``usage``: the prompt tokens the
    backend reported for the request; ``estimate``: about four characters a token.
    """

    tokens: int
    method: TokenCountMethod


@frozen
class ProviderConfig:
    """How to build one provider: its registry ``type``, its name and connection details."""

    name: str
    type: str = "openai_compatible"
    base_url: str | None = None
    api_key: str | None = None
    models: tuple[str, ...] = ()  # static model list; empty means discover via GET /models
    discover: bool = True
    timeout: float = 600.0  # seconds without any byte from the backend before giving up
    connect_timeout: float = 10.0
    deadlines: StreamDeadlines = field(default_factory=StreamDeadlines)  # first, between, whole
    max_retries: int = 0
    http_client: HTTPClientKind = "auto"  # lean unless a proxy applies; or "lean", "sdk"
    token_count: TokenCountSetting = "auto"  # tokenize, then usage, then estimate; or one of them
    responses: tuple[str, ...] = ()  # fnmatch patterns of backend ids whose Responses pass through
    embeddings: tuple[str, ...] = ()  # fnmatch patterns of backend ids that are embedding models
    extra: dict[str, str] = field(default_factory=dict)


class Provider(Protocol):
    """An inference backend. ``stream`` yields chunks; it raises ``UpstreamError`` on failure.

    ``count_tokens`` counts the input tokens ``request`` would cost, as exactly as the backend
    allows, and says how the count was made.
    """

    def stream(self, request: ChatRequest) -> AsyncIterator[Chunk]: ...

    async def count_tokens(self, request: ChatRequest) -> TokenCount: ...

    async def list_models(self) -> list[ModelInfo]: ...

    async def aclose(self) -> None: ...


CHAT_PATH = "/chat/completions"
COMPLETIONS_PATH = "/completions"  # the legacy text completions
RESPONSES_PATH = "/responses"


@runtime_checkable
class ChatCompletions(Protocol):
    """A provider whose backend serves the Chat Completions API itself (and, at ``path``
    ``/completions``, the legacy Completions API where it has it), so that a client's request
    can be passed through as it is (agentloom's ``/v1/chat/completions``, ``/v1/completions``).
    Failures raise ``UpstreamError``, as in :class:`Provider`."""

    async def complete(self, body: dict[str, object], path: str = CHAT_PATH) -> dict[str, object]:
        """The whole (non-streamed) answer to ``body``, decoded."""
        ...

    def stream_data(
        self, body: dict[str, object], path: str = CHAT_PATH
    ) -> AsyncIterator[list[str]]:
        """The ``data:`` payloads of the streamed answer to ``body`` (``[DONE]`` left out), a
        network read at a time, as the backend wrote them."""
        ...


@runtime_checkable
class NativeResponses(Protocol):
    """A provider whose backend serves the Responses API itself, so that a client's request can
    be passed through to its ``POST /responses`` (``responses`` patterns in its config).
    Failures raise ``UpstreamError``, as in :class:`Provider`."""

    async def respond(self, body: dict[str, object]) -> dict[str, object]:
        """The whole (non-streamed) Response object answering ``body``, decoded."""
        ...

    def respond_stream(self, body: dict[str, object]) -> AsyncIterator[list[str]]:
        """The ``data:`` payloads of the streamed answer to ``body`` (``[DONE]`` left out), a
        network read at a time, as the backend wrote them."""
        ...


def chat_completions_of(provider: object) -> ChatCompletions | None:
    """``provider`` if it takes Chat Completions requests itself (:class:`ChatCompletions`)."""
    return cast(ChatCompletions, provider) if _has(type(provider), ChatCompletions) else None


def native_responses_of(provider: object) -> NativeResponses | None:
    """``provider`` if its backend serves the Responses API itself (:class:`NativeResponses`)."""
    return cast(NativeResponses, provider) if _has(type(provider), NativeResponses) else None


def _has(cls: type, protocol: object) -> bool:
    """Whether ``cls`` has the methods of ``protocol`` (a runtime-checkable protocol of methods
    only), decided once per class: ``isinstance`` against a protocol walks its members on every
    call (~5 us, on every passed-through request)."""
    key = (cls, protocol)
    known = _IMPLEMENTS.get(key)
    if known is None:
        known = _IMPLEMENTS[key] = issubclass(cls, cast(type, protocol))
    return known


_IMPLEMENTS: dict[tuple[type, object], bool] = {}  # by provider class and protocol
