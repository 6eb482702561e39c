"""A provider for any OpenAI-compatible chat completions backend (vLLM, Ollama, llama.cpp ...).

The ``openai`` SDK sends the request (auth, retries, status errors, SSE decoding); the body and
the chunks are plain JSON that this module maps from :class:`ChatRequest` and to :data:`Chunk`.
The SDK's typed request transform and chunk models cost milliseconds per request and ~0.1 ms
per chunk, so they are bypassed: ``client.post`` with ``cast_to=object`` yields decoded dicts.

Every failure leaves as an :mod:`agentloom.errors` upstream error, never an SDK or HTTP type.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import aclosing
from typing import Final, TypeVar

import anyio
import anyio.to_thread
import httpx2
import openai
from openai import AsyncStream, RequestOptions

from agentloom import __version__
from agentloom.errors import (
    UpstreamError,
    UpstreamTimeoutError,
)
from agentloom.inference.base import (
    ChatMessage,
    ChatRequest,
    Chunk,
    ContentPart,
    Finish,
    FinishReason,
    FunctionSpec,
    ImagePart,
    JsonSchemaFormat,
    ModelInfo,
    ProviderConfig,
    ReasoningDelta,
    RefusalDelta,
    ResponseFormat,
    TextDelta,
    TextPart,
    TokenCount,
    TokenLogprob,
    ToolCall,
    ToolCallDelta,
    ToolChoice,
    TopLogprob,
    Usage,
)
from agentloom.inference.counting import BackendTokenCounter, tokenize_path
from agentloom.inference.http import (
    HTTPConnectError,
    HTTPError,
    HTTPTimeout,
    Origin,
    Pool,
    iter_sse_data,
)
from agentloom.text import clip
from agentloom.upstream import MAX_MESSAGE, Failure, retry_after, upstream_error

__all__ = ["INFERENCE", "OpenAICompatibleProvider", "chat_body", "status_error"]

_OPTIONS: Final[RequestOptions] = {"security": {"bearer_auth": True}}
_LIMITS: Final = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
LARGE_REQUEST_MESSAGES: Final = 256  # messages from which a body is built off the event loop
B = TypeVar("B")
_ANSWER_LIMIT: Final = 64 * 1024 * 1024  # a /tokenize answer lists every token id of the input
_PLAIN_FIELDS: Final = (
    "temperature",
    "top_p",
    "presence_penalty",
    "frequency_penalty",
    "max_tokens",
    "reasoning_effort",
    "user",
    "prompt_cache_key",
    "safety_identifier",
    "service_tier",
)
_FINISH_REASONS: Final[Mapping[str, FinishReason]] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "content_filter": "content_filter",
    "function_call": "tool_calls",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_length": "length",
}


# --- request ---------------------------------------------------------------------------------


def chat_body(request: ChatRequest) -> dict[str, object]:
    """The streaming chat completions JSON body for ``request``; unset fields are omitted."""
    body: dict[str, object] = {
        "model": request.model,
        "messages": [_message(m) for m in request.messages],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    for name in _PLAIN_FIELDS:
        value = getattr(request, name)
        if value is not None:
            body[name] = value
    if request.tools:
        body["tools"] = [_tool(t) for t in request.tools]
        if request.tool_choice is not None:
            body["tool_choice"] = _tool_choice(request.tool_choice)
        if request.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = request.parallel_tool_calls
    if request.top_logprobs is not None:
        body["logprobs"] = True
        if request.top_logprobs > 0:
            body["top_logprobs"] = request.top_logprobs
    if request.response_format != "text":
        body["response_format"] = _response_format(request.response_format)
    return body


def _encoded_body(request: ChatRequest) -> bytes:
    return json.dumps(chat_body(request), separators=(",", ":")).encode()


async def _built(request: ChatRequest, build: Callable[[ChatRequest], B]) -> B:
    """``build(request)``: in a worker thread for a long history, so that encoding thousands of
    messages does not hold up the event loop."""
    if len(request.messages) < LARGE_REQUEST_MESSAGES:
        return build(request)
    return await anyio.to_thread.run_sync(build, request)


def _message(message: ChatMessage) -> dict[str, object]:
    out: dict[str, object] = {"role": message.role, "content": _content(message.content)}
    if message.tool_calls:
        out["tool_calls"] = [_tool_call(call) for call in message.tool_calls]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.reasoning is not None:
        out["reasoning_content"] = message.reasoning
    return out


def _content(content: str | tuple[ContentPart, ...] | None) -> object:
    if content is None or isinstance(content, str):
        return content
    return [_part(part) for part in content]


def _part(part: ContentPart) -> dict[str, object]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart):
        return {"type": "image_url", "image_url": {"url": part.url, "detail": part.detail}}
    file: dict[str, object] = {}
    if part.filename is not None:
        file["filename"] = part.filename
    if part.data is not None:
        file["file_data"] = part.data
    if part.url is not None:
        file["file_url"] = part.url
    return {"type": "file", "file": file}


def _tool_call(call: ToolCall) -> dict[str, object]:
    function = {"name": call.name, "arguments": call.arguments}
    return {"id": call.id, "type": "function", "function": function}


def _tool(spec: FunctionSpec) -> dict[str, object]:
    function: dict[str, object] = {"name": spec.name, "parameters": spec.parameters}
    if spec.description is not None:
        function["description"] = spec.description
    if spec.strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def _tool_choice(choice: ToolChoice) -> object:
    if isinstance(choice, str):
        return choice
    return {"type": "function", "function": {"name": choice.name}}


def _response_format(fmt: ResponseFormat) -> dict[str, object]:
    if not isinstance(fmt, JsonSchemaFormat):
        return {"type": fmt}
    schema: dict[str, object] = {"name": fmt.name, "schema": fmt.schema}
    if fmt.strict:
        schema["strict"] = True
    if fmt.description is not None:
        schema["description"] = fmt.description
    return {"type": "json_schema", "json_schema": schema}


# --- chunks ----------------------------------------------------------------------------------


class _InvalidChunk(Exception):
    """A stream line that is JSON but not a chat completion chunk."""


def _chunks(data: object) -> tuple[list[Chunk], Usage | None]:
    """The chunks in one decoded stream line, and its usage (reported once, at the end)."""
    if not isinstance(data, dict):
        raise _InvalidChunk(data)
    choices = data.get("choices")
    usage = data.get("usage")
    if not isinstance(choices, list) and (choices is not None or usage is None):
        raise _InvalidChunk(data)
    out: list[Chunk] = []
    for choice in choices or ():
        _choice(choice, out)
    return out, _usage(usage) if usage else None


def _choice(choice: object, out: list[Chunk]) -> None:
    if not isinstance(choice, dict):
        raise _InvalidChunk(choice)
    delta = choice.get("delta")
    if delta:
        if not isinstance(delta, dict):
            raise _InvalidChunk(choice)
        _delta(delta, choice.get("logprobs"), out)
    reason = choice.get("finish_reason")
    if reason:
        out.append(Finish(_FINISH_REASONS.get(_text(reason) or "", "stop")))


def _delta(delta: dict[str, object], logprobs: object, out: list[Chunk]) -> None:
    thought = _text(delta.get("reasoning_content")) or _text(delta.get("reasoning"))
    if thought:
        out.append(ReasoningDelta(thought))
    content = _text(delta.get("content"))
    tokens = _logprobs(logprobs) if logprobs else ()
    if content or tokens:
        out.append(TextDelta(content or "", tokens))
    refusal = _text(delta.get("refusal"))
    if refusal:
        out.append(RefusalDelta(refusal))
    calls = delta.get("tool_calls")
    if calls:
        if not isinstance(calls, list):
            raise _InvalidChunk(delta)
        out.extend(_tool_call_delta(position, call) for position, call in enumerate(calls))


def _tool_call_delta(position: int, call: object) -> ToolCallDelta:
    if not isinstance(call, dict):
        raise _InvalidChunk(call)
    function = call.get("function") or {}
    if not isinstance(function, dict):
        raise _InvalidChunk(call)
    index = call.get("index")
    return ToolCallDelta(
        index=index if isinstance(index, int) else position,
        id=_text(call.get("id")),
        name=_text(function.get("name")),
        arguments=_text(function.get("arguments")) or "",
    )


def _logprobs(value: object) -> tuple[TokenLogprob, ...]:
    content = value.get("content") if isinstance(value, dict) else None
    if not isinstance(content, list):
        return ()
    return tuple(_token_logprob(entry) for entry in content)


def _token_logprob(entry: object) -> TokenLogprob:
    if not isinstance(entry, dict):
        raise _InvalidChunk(entry)
    tops = entry.get("top_logprobs")
    return TokenLogprob(
        token=_text(entry.get("token")) or "",
        logprob=_number(entry.get("logprob")),
        bytes=_bytes(entry.get("bytes")),
        top_logprobs=tuple(_top_logprob(top) for top in tops) if isinstance(tops, list) else (),
    )


def _top_logprob(entry: object) -> TopLogprob:
    if not isinstance(entry, dict):
        raise _InvalidChunk(entry)
    return TopLogprob(
        token=_text(entry.get("token")) or "",
        logprob=_number(entry.get("logprob")),
        bytes=_bytes(entry.get("bytes")),
    )


def _usage(value: object) -> Usage:
    if not isinstance(value, dict):
        raise _InvalidChunk(value)
    prompt = value.get("prompt_tokens_details")
    completion = value.get("completion_tokens_details")
    return Usage(
        input_tokens=_count(value.get("prompt_tokens")),
        output_tokens=_count(value.get("completion_tokens")),
        cached_tokens=_count(prompt.get("cached_tokens")) if isinstance(prompt, dict) else 0,
        reasoning_tokens=(
            _count(completion.get("reasoning_tokens")) if isinstance(completion, dict) else 0
        ),
    )


def _text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise _InvalidChunk(value)


def _number(value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise _InvalidChunk(value)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _bytes(value: object) -> tuple[int, ...] | None:
    if isinstance(value, list) and all(isinstance(b, int) for b in value):
        return tuple(value)
    return None


# --- errors ----------------------------------------------------------------------------------


def _cause(exc: BaseException) -> str:
    cause = exc.__cause__ or exc
    return str(cause) or type(cause).__name__


def _backend_message(exc: openai.APIError) -> str:
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    if isinstance(body, str) and body:
        return body
    return exc.message


INFERENCE: Final = "the inference backend"


def _failed(failure: Failure) -> UpstreamError:
    return upstream_error(INFERENCE, failure, context_window=True)


def _status_error(exc: openai.APIStatusError) -> UpstreamError:
    status = exc.status_code
    wait = retry_after(exc.response.headers) if status == 429 else None
    message = _backend_message(exc)
    return _failed(Failure(status, message, code=exc.code, param=exc.param, retry_after=wait))


def status_error(exc: openai.APIStatusError) -> UpstreamError:
    """The typed error for an SDK status error (the LLM adapter's Responses path uses it too)."""
    return _status_error(exc)


def _reported_error(error: object) -> UpstreamError:
    """An error the backend reported inside a stream (vLLM: ``data: {"error": {...}}``)."""
    fields = error if isinstance(error, dict) else {}
    message = fields.get("message")
    text = message if isinstance(message, str) and message else "an error occurred while streaming"
    code = None if fields.get("code") is None else str(fields["code"])
    param = fields.get("param") if isinstance(fields.get("param"), str) else None
    status = int(code) if code is not None and code.isdigit() else None
    status = status if status is not None and 400 <= status < 600 else None
    return _failed(Failure(status, text, code=code, param=param))


def _http_status_error(status: int, headers: Mapping[str, str], raw: bytes) -> UpstreamError:
    """A non-2xx answer read by the lean client, classified as the SDK's would be."""
    return _failed(Failure.of_http(status, headers, raw))


def _invalid_chunk(data: object) -> UpstreamError:
    shown = data if isinstance(data, str) else json.dumps(data)
    shown = clip(shown, MAX_MESSAGE)
    return UpstreamError(f"the inference backend sent an invalid stream chunk: {shown}")


def _json_or_none(raw: bytes) -> object:
    """A whole JSON answer, or ``None`` when it is not JSON (a count is then not read from it)."""
    try:
        return json.loads(raw)
    except ValueError:  # JSONDecodeError or UnicodeDecodeError
        return None


# --- the provider ----------------------------------------------------------------------------


class OpenAICompatibleProvider:
    """Streams chat completions from ``config.base_url``.

    The streamed request goes through the lean keep-alive client (:mod:`.http`) unless the
    config asks for the SDK (``http_client = "sdk"``) or a proxy from the environment applies to
    the backend; the ``openai`` SDK does everything else (model listing) and that fallback.
    Token counting (:mod:`.counting`) posts through the same client as the stream.
    """

    def __init__(self, config: ProviderConfig) -> None:
        self.config = config
        timeout = httpx2.Timeout(config.timeout, connect=config.connect_timeout)
        self._client = openai.AsyncOpenAI(
            base_url=config.base_url,
            api_key=config.api_key or "not-needed",
            timeout=timeout,
            max_retries=config.max_retries,
            http_client=httpx2.AsyncClient(timeout=timeout, limits=_LIMITS, follow_redirects=True),
        )
        self._where = str(self._client.base_url).rstrip("/")
        self._pool = _lean_pool(config, self._where)
        base = self._client.base_url
        self._tokenize_url = str(base.copy_with(path=tokenize_path(base.path)))
        self._counter = BackendTokenCounter(
            config.name, config.token_count, tokenize=self._tokenize, complete=self._complete
        )

    async def stream(self, request: ChatRequest) -> AsyncIterator[Chunk]:
        if self._pool is None:
            events = self._sdk_events(await _built(request, chat_body))
        else:
            events = self._lean_events(await _built(request, _encoded_body))
        usage: Usage | None = None
        async with aclosing(events):
            async for data in events:
                try:
                    chunks, seen = _chunks(data)
                except _InvalidChunk as exc:
                    raise _invalid_chunk(data) from exc
                usage = seen or usage
                for chunk in chunks:
                    yield chunk
        if usage is not None:
            yield usage

    async def list_models(self) -> list[ModelInfo]:
        try:
            listing = await self._client.get("/models", cast_to=object, options=_OPTIONS)
        except openai.APIError as exc:
            raise self._open_error(exc) from exc
        return _models(listing, self.config.name)

    async def count_tokens(self, request: ChatRequest) -> TokenCount:
        return await self._counter.count(request, chat_body(request))

    async def aclose(self) -> None:
        if self._pool is not None:
            await self._pool.aclose()
        await self._client.close()

    # --- the lean client ---------------------------------------------------------------------

    async def _lean_events(self, payload: bytes) -> AsyncGenerator[object, None]:
        assert self._pool is not None
        started = False
        try:
            async with self._pool.post("/chat/completions", payload) as response:
                if not 200 <= response.status < 300:
                    raw = await response.read()
                    raise _http_status_error(response.status, response.headers, raw)
                started = True
                async for data in iter_sse_data(response.iter_bytes()):
                    if data != "[DONE]":
                        yield _decoded(data)
        except HTTPError as exc:
            raise self._lean_error(exc, started) from exc

    async def _lean_post(self, path: str, body: dict[str, object], *, root: bool = False) -> object:
        """POST ``body``, read the whole JSON answer (``None`` if it is not JSON)."""
        assert self._pool is not None
        payload = json.dumps(body, separators=(",", ":")).encode()
        try:
            async with self._pool.post(path, payload, root=root) as response:
                raw = await response.read(_ANSWER_LIMIT)
        except HTTPError as exc:
            raise self._lean_error(exc, started=False) from exc
        if not 200 <= response.status < 300:
            raise _http_status_error(response.status, response.headers, raw)
        return _json_or_none(raw)

    def _lean_error(self, exc: HTTPError, started: bool) -> UpstreamError:
        if isinstance(exc, HTTPTimeout):
            return self._timeout_error(started)
        if isinstance(exc, HTTPConnectError) or not started:
            return UpstreamError(f"could not reach the inference backend at {self._where}: {exc}")
        return UpstreamError(f"the inference backend closed the stream before it finished: {exc}")

    def _timeout_error(self, started: bool) -> UpstreamTimeoutError:
        if started:
            return UpstreamTimeoutError(
                f"the inference backend at {self._where} stopped streaming"
                f" for more than {self.config.timeout:g}s"
            )
        return UpstreamTimeoutError(
            f"the inference backend at {self._where} did not answer within {self.config.timeout:g}s"
        )

    # --- token counting (one JSON answer each) -----------------------------------------------

    async def _tokenize(self, body: dict[str, object]) -> object:
        if self._pool is None:
            return await self._sdk_post(self._tokenize_url, body)
        return await self._lean_post(tokenize_path(self._pool.origin.base_path), body, root=True)

    async def _complete(self, body: dict[str, object]) -> object:
        if self._pool is None:
            return await self._sdk_post("/chat/completions", body)
        return await self._lean_post("/chat/completions", body)

    # --- the SDK -----------------------------------------------------------------------------

    async def _sdk_post(self, url: str, body: dict[str, object]) -> object:
        """POST ``body`` (``url`` absolute or under the base URL) and decode the JSON answer."""
        try:
            return await self._client.post(url, body=body, cast_to=object, options=_OPTIONS)
        except openai.APIError as exc:
            raise self._open_error(exc) from exc
        except (json.JSONDecodeError, UnicodeDecodeError):  # a JSON content type, a non-JSON body
            return None

    async def _sdk_events(self, body: dict[str, object]) -> AsyncGenerator[object, None]:
        events = await self._open(body)
        try:
            async for data in events:
                yield data
        except openai.APIError as exc:
            raise self._stream_error(exc) from exc
        except json.JSONDecodeError as exc:
            raise _invalid_chunk(exc.doc) from exc
        finally:
            with anyio.CancelScope(shield=True):
                await events.close()

    async def _open(self, body: dict[str, object]) -> AsyncStream[object]:
        try:
            return await self._client.post(
                "/chat/completions",
                body=body,
                cast_to=object,
                options=_OPTIONS,
                stream=True,
                stream_cls=AsyncStream[object],
            )
        except openai.APIError as exc:
            raise self._open_error(exc) from exc

    def _open_error(self, exc: openai.APIError) -> UpstreamError:
        if isinstance(exc, openai.APIStatusError):
            return _status_error(exc)
        if isinstance(exc, openai.APITimeoutError):
            return self._timeout_error(started=False)
        if isinstance(exc, openai.APIConnectionError):
            return UpstreamError(
                f"could not reach the inference backend at {self._where}: {_cause(exc)}"
            )
        return _reported_error(exc.body)

    def _stream_error(self, exc: openai.APIError) -> UpstreamError:
        if isinstance(exc, openai.APITimeoutError):
            return self._timeout_error(started=True)
        if isinstance(exc, openai.APIConnectionError):
            return UpstreamError(
                "the inference backend closed the stream before it finished: " + _cause(exc)
            )
        return _reported_error(exc.body)


def _decoded(data: str) -> object:
    """One ``data:`` payload as JSON; an error the backend reports in-stream is raised."""
    try:
        value: object = json.loads(data)
    except json.JSONDecodeError as exc:
        raise _invalid_chunk(data) from exc
    if isinstance(value, dict) and value.get("error"):
        raise _reported_error(value["error"])
    return value


def _lean_pool(config: ProviderConfig, where: str) -> Pool | None:
    """The lean client for ``where``, or None when the SDK must send the request."""
    if config.http_client == "sdk":
        return None
    origin = Origin.parse(where)
    if config.http_client == "auto" and _proxied(origin):
        return None
    headers = {"Accept": "text/event-stream", "User-Agent": f"agentloom/{__version__}"}
    if config.api_key:
        headers["Authorization"] = f"Bearer {config.api_key}"
    return Pool(
        origin,
        connect_timeout=config.connect_timeout,
        read_timeout=config.timeout,
        headers=headers,
    )


def _proxied(origin: Origin) -> bool:
    proxies = urllib.request.getproxies()
    if origin.scheme not in proxies and "all" not in proxies:
        return False
    return not urllib.request.proxy_bypass(origin.host)


# --- models ----------------------------------------------------------------------------------


def _models(listing: object, owner: str) -> list[ModelInfo]:
    entries = listing.get("data") if isinstance(listing, dict) else listing
    if not isinstance(entries, list):
        raise UpstreamError(
            f"the inference backend sent an invalid model list: {clip(str(listing), MAX_MESSAGE)}"
        )
    return [
        _model(entry, owner) for entry in entries if isinstance(entry, dict) and _text_id(entry)
    ]


def _text_id(entry: dict[str, object]) -> bool:
    return isinstance(entry.get("id"), str)


def _model(entry: dict[str, object], owner: str) -> ModelInfo:
    created = entry.get("created")
    owned_by = entry.get("owned_by")
    return ModelInfo(
        id=str(entry["id"]),
        created=created if isinstance(created, int) else 0,
        owned_by=owned_by if isinstance(owned_by, str) else owner,
        context_window=_context_window(entry),
    )


def _context_window(entry: dict[str, object]) -> int | None:
    for key in ("max_model_len", "context_length", "context_window"):
        value = entry.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None
