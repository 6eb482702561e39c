"""A fake OpenAI-compatible inference server over real HTTP that serves any ``Provider``.

```python
model = ScriptedModel(["Hello!"])
backend = FakeBackend(model)
with backend.serve() as base_url:        # http://127.0.0.1:PORT/v1
    ...                                  # point a provider (or agentloom) at base_url
backend.requests[0]["messages"]          # the raw JSON bodies it received
backend.chat_requests[0]                 # ... read back into ChatRequest
```

It answers ``GET /v1/models`` and ``POST /v1/chat/completions`` (also without ``/v1``), streamed
(SSE, a final usage chunk when ``stream_options.include_usage``) or not, the legacy
``POST /v1/completions`` the same way (``completions = False``: a 404 there), and vLLM's
``POST /tokenize`` (at the root only, as vLLM serves it) with the provider's ``count_tokens``;
``FakeBackend(model, tokenize=False)`` answers 404 there instead, like most backends. It also
answers ``POST /v1/embeddings`` with deterministic hashed bag-of-words vectors
(:mod:`agentloom.testing.embeddings`); errors put in ``embedding_errors`` answer the next
embeddings requests, one each, and seconds put in ``embedding_delays`` hold them back.

Errors the provider raises before its first chunk become the matching HTTP status and OpenAI
error body; later ones an in-stream ``{"error": ...}`` event, as vLLM sends. The faults of a
:class:`~agentloom.inference.scripted.ScriptedModel` are acted out on the wire: ``break_stream()``
drops the connection, ``invalid_chunk()`` sends a line that is not a chunk, ``stall()`` goes
silent after the headers. The app is raw ASGI, so the benchmark can use it as a fast backend.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import time
from collections.abc import AsyncIterator, Coroutine, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Final, Literal

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentloom.errors import (
    ContextLengthExceededError,
    UpstreamError,
    UpstreamRateLimitError,
    UpstreamRequestError,
    UpstreamTimeoutError,
)
from agentloom.inference.base import (
    ChatRequest,
    Chunk,
    Finish,
    ModelInfo,
    Provider,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    TokenLogprob,
    ToolCallDelta,
    Usage,
)
from agentloom.inference.scripted import BreakStream, Fault, InvalidChunk, ScriptedModel, Stall
from agentloom.json_types import JSONObject
from agentloom.testing.chat_requests import BadRequestError, json_object, parse_chat_request
from agentloom.testing.embeddings import embeddings_answer
from agentloom.testing.serving import serve, serve_async

__all__ = [
    "DEFAULT_MODEL",
    "BadRequestError",
    "FakeBackend",
    "create_backend_app",
    "parse_chat_request",
    "serve",
    "serve_async",
]

DEFAULT_MODEL: Final = "fake-model"
ReasoningField = Literal["reasoning_content", "reasoning"]

_encode_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_JSON_HEADERS: Final = [(b"content-type", b"application/json")]
_SSE_HEADERS: Final = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
_DONE: Final = b"data: [DONE]\n\n"
_ERROR_STATUS: Final[tuple[tuple[type[UpstreamError], int], ...]] = (
    (UpstreamRateLimitError, 429),
    (ContextLengthExceededError, 400),
    (UpstreamRequestError, 400),
    (UpstreamTimeoutError, 504),
    (UpstreamError, 500),
)


def _dumps(value: object) -> bytes:
    return _encode_json(value).encode()


# --- writing responses -----------------------------------------------------------------------


def _logprobs_json(tokens: tuple[TokenLogprob, ...]) -> JSONObject:
    return {
        "content": [
            {
                "token": t.token,
                "logprob": t.logprob,
                "bytes": list(t.bytes) if t.bytes is not None else None,
                "top_logprobs": [
                    {
                        "token": top.token,
                        "logprob": top.logprob,
                        "bytes": list(top.bytes) if top.bytes is not None else None,
                    }
                    for top in t.top_logprobs
                ],
            }
            for t in tokens
        ],
        "refusal": None,
    }


def _tool_call_json(delta: ToolCallDelta) -> JSONObject:
    function: JSONObject = {"arguments": delta.arguments}
    if delta.name is not None:
        function["name"] = delta.name
    call: JSONObject = {"index": delta.index, "function": function}
    if delta.id is not None:
        call["id"] = delta.id
        call["type"] = "function"
    return call


def _usage_json(usage: Usage) -> JSONObject:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }


def _error_status(exc: UpstreamError) -> int:
    default = next(status for kind, status in _ERROR_STATUS if isinstance(exc, kind))
    return exc.status or default


def _error_json(
    message: str, status: int, *, code: object = None, param: str | None = None
) -> bytes:
    kind = "invalid_request_error" if status < 500 else "server_error"
    error = {"message": message, "type": kind, "param": param, "code": code}
    return _dumps({"error": error})


async def _send_body(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]
) -> None:
    length = (b"content-length", str(len(body)).encode())
    await send({"type": "http.response.start", "status": status, "headers": [*headers, length]})
    await send({"type": "http.response.body", "body": body})


async def _send_json(send: Send, status: int, body: bytes) -> None:
    await _send_body(send, status, body, _JSON_HEADERS)


async def _send_error(send: Send, exc: UpstreamError) -> None:
    status = _error_status(exc)
    headers = list(_JSON_HEADERS)
    if isinstance(exc, UpstreamRateLimitError) and exc.retry_after is not None:
        headers.append((b"retry-after", str(math.ceil(exc.retry_after)).encode()))
        headers.append((b"retry-after-ms", str(round(exc.retry_after * 1000)).encode()))
    body = _error_json(exc.message, status, code=exc.code, param=exc.param)
    await _send_body(send, status, body, headers)


async def _send_broken(send: Send) -> None:
    """Start a JSON answer, then return without finishing it: the server drops the connection."""
    await send({"type": "http.response.start", "status": 200, "headers": _JSON_HEADERS})
    await send({"type": "http.response.body", "body": b'{"id": "chatcmpl', "more_body": True})


class _SSEWriter:
    """Frames chunks as chat completion chunk events on one streamed response."""

    def __init__(self, send: Send, head: JSONObject, field: ReasoningField, usage: bool) -> None:
        self._send = send
        self._head = _dumps(head)[:-1] + b',"choices":'
        self._reasoning_field = field
        self._include_usage = usage
        self._usage: Usage | None = None
        self._role_sent = False

    async def start(self) -> None:
        await self._send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})

    async def play(self, event: Chunk | Fault) -> bool:
        """Write one event; ``False`` means the stream must break off here."""
        if isinstance(event, BreakStream):
            return False
        if isinstance(event, Stall):
            await asyncio.sleep(event.seconds)
        elif isinstance(event, InvalidChunk):
            await self._write(b"data: " + event.data.encode() + b"\n\n")
        elif isinstance(event, Usage):
            self._usage = event
        else:
            await self._write(self._chunk(event))
        return True

    async def error(self, exc: UpstreamError) -> None:
        status = _error_status(exc)
        body = _error_json(exc.message, status, code=status, param=exc.param)
        await self._write(b"data: " + body + b"\n\n")
        await self._send({"type": "http.response.body", "body": _DONE})

    async def end(self) -> None:
        tail = _DONE
        if self._include_usage and self._usage is not None:
            usage = _dumps(_usage_json(self._usage))
            tail = b"data: " + self._head + b'[],"usage":' + usage + b"}\n\n" + _DONE
        await self._send({"type": "http.response.body", "body": tail})

    async def _write(self, data: bytes) -> None:
        await self._send({"type": "http.response.body", "body": data, "more_body": True})

    def _chunk(self, chunk: Chunk) -> bytes:
        delta: JSONObject = {}
        if not self._role_sent:
            delta["role"] = "assistant"
            self._role_sent = True
        logprobs: JSONObject | None = None
        finish: str | None = None
        if isinstance(chunk, TextDelta):
            delta["content"] = chunk.text
            logprobs = _logprobs_json(chunk.logprobs) if chunk.logprobs else None
        elif isinstance(chunk, ReasoningDelta):
            delta[self._reasoning_field] = chunk.text
        elif isinstance(chunk, RefusalDelta):
            delta["refusal"] = chunk.text
        elif isinstance(chunk, ToolCallDelta):
            delta["tool_calls"] = [_tool_call_json(chunk)]
        elif isinstance(chunk, Finish):
            finish = chunk.reason
        choice = {"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish}
        return b"data: " + self._head + _dumps([choice]) + b"}\n\n"


class _Completion:
    """A whole (non-streamed) chat completion, assembled from chunks."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.refusal: list[str] = []
        self.reasoning: list[str] = []
        self.logprobs: list[TokenLogprob] = []
        self.calls: dict[int, list[ToolCallDelta]] = {}
        self.finish: str = "stop"
        self.usage = Usage()

    def add(self, chunk: Chunk) -> None:
        if isinstance(chunk, TextDelta):
            self.text.append(chunk.text)
            self.logprobs.extend(chunk.logprobs)
        elif isinstance(chunk, ReasoningDelta):
            self.reasoning.append(chunk.text)
        elif isinstance(chunk, RefusalDelta):
            self.refusal.append(chunk.text)
        elif isinstance(chunk, ToolCallDelta):
            self.calls.setdefault(chunk.index, []).append(chunk)
        elif isinstance(chunk, Finish):
            self.finish = chunk.reason
        else:
            self.usage = chunk

    def json(self, head: JSONObject, field: ReasoningField) -> JSONObject:
        message: JSONObject = {
            "role": "assistant",
            "content": "".join(self.text) if self.text else None,
            "refusal": "".join(self.refusal) if self.refusal else None,
        }
        if self.reasoning:
            message[field] = "".join(self.reasoning)
        if self.calls:
            message["tool_calls"] = [_whole_call(self.calls[i]) for i in sorted(self.calls)]
        logprobs = _logprobs_json(tuple(self.logprobs)) if self.logprobs else None
        choice: JSONObject = {
            "index": 0,
            "message": message,
            "logprobs": logprobs,
            "finish_reason": self.finish,
        }
        return {**head, "choices": [choice], "usage": _usage_json(self.usage)}


def _whole_call(deltas: list[ToolCallDelta]) -> JSONObject:
    call_id = next((d.id for d in deltas if d.id is not None), "")
    name = next((d.name for d in deltas if d.name is not None), "")
    arguments = "".join(d.arguments for d in deltas)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# --- the backend -----------------------------------------------------------------------------


def _replaying(body: bytes, receive: Receive) -> Receive:
    """``receive`` with ``body`` as the request's body (then what ``receive`` says)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _as_text_completions(send: Send) -> Send:
    """``send``, with chat completions (whole or streamed) written as text completions."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":  # the length changes: sent chunked
            headers = [(k, v) for k, v in message.get("headers", []) if k != b"content-length"]
            message = {**message, "headers": headers}
        elif message["type"] == "http.response.body" and message.get("body"):
            lines = message["body"].split(b"\n")
            message = {**message, "body": b"\n".join(_text_line(line) for line in lines)}
        await send(message)

    return sending


def _text_line(line: bytes) -> bytes:
    prefix = b"data: " if line.startswith(b"data: {") else b""
    if not prefix and not line.startswith(b"{"):
        return line
    value = json.loads(line[len(prefix) :])
    if not isinstance(value, dict) or "choices" not in value:
        return line
    value["object"] = "text_completion"
    for choice in value["choices"]:
        part = choice.pop("message", None) or choice.pop("delta", None) or {}
        choice["text"] = part.get("content") or ""
    return prefix + _dumps(value)


async def _read_body(receive: Receive) -> bytes:
    parts: list[bytes] = []
    while True:
        message = await receive()
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(parts)


async def _wait_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def _close(events: AsyncIterator[object]) -> None:
    aclose = getattr(events, "aclose", None)
    if aclose is not None:
        await aclose()


class FakeBackend:
    """Serves ``provider`` as an OpenAI-compatible backend and records what it was sent.

    ``app`` is the ASGI app; ``requests`` the raw JSON bodies of chat requests, ``chat_requests``
    the same read back as :class:`ChatRequest`; ``tokenize_requests`` and
    ``tokenize_chat_requests`` the same for ``/tokenize`` (kept apart, so ``requests[-1]`` is
    always the last chat request); ``embedding_requests`` the bodies sent to ``/embeddings``,
    ``embedding_errors`` errors to answer the next ones with (the first is used and removed by
    each request), ``embedding_delays`` seconds to wait before answering them (the same way),
    ``embedding_peak`` the most embeddings requests answered at once; ``disconnects`` counts
    clients that went away before their
    answer was complete. ``model`` is the model id tests should ask for (any id is answered).
    ``reasoning_field`` names the delta field reasoning is sent in; ``tokenize`` whether
    ``/tokenize`` is served (it is recorded either way).
    """

    def __init__(
        self, provider: Provider, *, models: Sequence[str] | None = None, tokenize: bool = True
    ) -> None:
        self.provider = provider
        self.models = tuple(models) if models is not None else None
        self.reasoning_field: ReasoningField = "reasoning_content"
        self.tokenize = self._tokenize_default = tokenize
        self.requests: list[JSONObject] = []
        self.chat_requests: list[ChatRequest] = []
        self.tokenize_requests: list[JSONObject] = []
        self.tokenize_chat_requests: list[ChatRequest] = []
        self.completions = True  # the legacy POST /v1/completions is served
        self.completion_requests: list[JSONObject] = []
        self.embedding_requests: list[JSONObject] = []
        self.embedding_errors: list[UpstreamError] = []
        self.embedding_delays: list[float] = []
        self.embedding_peak = 0
        self._embedding_busy: set[object] = set()
        self.disconnects = 0
        self._base_url: str | None = None
        self._ids = itertools.count(1)

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            await self._handle(scope, receive, send)

        self.app: ASGIApp = app

    @property
    def model(self) -> str:
        return self.models[0] if self.models else DEFAULT_MODEL

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT/v1`` while :meth:`serve` runs."""
        if self._base_url is None:
            raise RuntimeError("the fake backend is not being served; use `with backend.serve():`")
        return self._base_url

    @property
    def last_request(self) -> JSONObject:
        if not self.requests:
            raise LookupError("the fake backend has not received a chat request")
        return self.requests[-1]

    def reset(self, provider: Provider | None = None) -> None:
        """Forget what was received (and serve ``provider`` from now on, if given)."""
        if provider is not None:
            self.provider = provider
        self.reasoning_field = "reasoning_content"
        self.tokenize = self._tokenize_default
        self.requests = []
        self.chat_requests = []
        self.tokenize_requests = []
        self.tokenize_chat_requests = []
        self.completions = True
        self.completion_requests = []
        self.embedding_requests = []
        self.embedding_errors = []
        self.embedding_delays = []
        self.embedding_peak = 0
        self._embedding_busy = set()  # late answers to earlier requests do not count
        self.disconnects = 0

    @contextmanager
    def serve(self, *, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
        """Run the backend over HTTP in a background thread; yields its base URL."""
        with serve(self.app, host=host, port=port) as base_url:
            self._base_url = base_url
            try:
                yield base_url
            finally:
                self._base_url = None

    # --- ASGI --------------------------------------------------------------------------------

    async def _handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["path"] == "/tokenize" and scope["method"] == "POST":  # vLLM: not under /v1
            await self._tokenize(receive, send)
            return
        path = scope["path"].removeprefix("/v1")
        if path == "/chat/completions" and scope["method"] == "POST":
            await self._chat(receive, send)
        elif path == "/completions" and scope["method"] == "POST" and self.completions:
            await self._completions(receive, send)
        elif path == "/models" and scope["method"] == "GET":
            await self._models(send)
        elif path == "/embeddings" and scope["method"] == "POST":
            await self._embeddings(receive, send)
        else:
            await _send_json(send, 404, _error_json(f"no route {path}", 404, code="not_found"))

    async def _completions(self, receive: Receive, send: Send) -> None:
        """The legacy API: the prompt answered as one user message, the answer's text (or each
        delta's) as ``choices[].text``."""
        try:
            body = json_object(json.loads(await _read_body(receive)), "the request body")
        except ValueError as exc:
            await _send_json(send, 400, _error_json(str(exc), 400))
            return
        self.completion_requests.append(body)
        prompt = body.get("prompt", "")
        text = prompt if isinstance(prompt, str) else json.dumps(prompt)
        rest = {key: value for key, value in body.items() if key != "prompt"}
        chat = _dumps({**rest, "messages": [{"role": "user", "content": text}]})
        await self._chat(_replaying(chat, receive), _as_text_completions(send))

    async def _models(self, send: Send) -> None:
        if self.models is not None:
            infos = [ModelInfo(id=m, owned_by="fake-backend") for m in self.models]
        else:
            infos = await self.provider.list_models()
        data = [_model_json(info) for info in infos]
        await _send_json(send, 200, _dumps({"object": "list", "data": data}))

    async def _embeddings(self, receive: Receive, send: Send) -> None:
        try:
            body = json_object(json.loads(await _read_body(receive)), "the request body")
            self.embedding_requests.append(body)
            answer = embeddings_answer(body)
        except ValueError as exc:  # JSONDecodeError, BadRequestError or a bad field
            await _send_json(send, 400, _error_json(str(exc), 400))
            return
        delay = self.embedding_delays.pop(0) if self.embedding_delays else 0.0
        error = self.embedding_errors.pop(0) if self.embedding_errors else None
        await self._until_disconnect(self._answer_embeddings(send, answer, delay, error), receive)

    async def _answer_embeddings(
        self, send: Send, answer: Mapping[str, object], delay: float, error: UpstreamError | None
    ) -> None:
        busy, token = self._embedding_busy, object()
        busy.add(token)
        self.embedding_peak = max(self.embedding_peak, len(busy))
        try:
            if delay:
                await asyncio.sleep(delay)
            if error is not None:
                await _send_error(send, error)
            else:
                await _send_json(send, 200, _dumps(answer))
        finally:
            busy.discard(token)

    async def _tokenize(self, receive: Receive, send: Send) -> None:
        """vLLM's chat form of ``/tokenize``: ``{"model", "messages", "tools", ...}``."""
        problem = ""
        try:
            body = json_object(json.loads(await _read_body(receive)), "the request body")
            self.tokenize_requests.append(body)
            request = parse_chat_request(body)
        except ValueError as exc:  # JSONDecodeError or BadRequestError
            request, problem = None, str(exc)
        if not self.tokenize:
            await _send_json(send, 404, _error_json("no route /tokenize", 404, code="not_found"))
        elif request is None:
            await _send_json(send, 400, _error_json(problem, 400))
        else:
            self.tokenize_chat_requests.append(request)
            await self._count(send, request)

    async def _count(self, send: Send, request: ChatRequest) -> None:
        try:
            counted = await self.provider.count_tokens(request)
        except UpstreamError as exc:
            await _send_error(send, exc)
            return
        window = await self._context_window(request.model)
        answer: JSONObject = {"count": counted.tokens, "max_model_len": window, "tokens": []}
        await _send_json(send, 200, _dumps(answer))

    async def _context_window(self, model: str) -> int | None:
        infos = [] if self.models is not None else await self.provider.list_models()
        return next((info.context_window for info in infos if info.id == model), None)

    async def _chat(self, receive: Receive, send: Send) -> None:
        try:
            body = json_object(json.loads(await _read_body(receive)), "the request body")
            self.requests.append(body)
            request = parse_chat_request(body)
        except ValueError as exc:  # JSONDecodeError or BadRequestError
            await _send_json(send, 400, _error_json(str(exc), 400))
            return
        self.chat_requests.append(request)
        head: JSONObject = {
            "id": f"chatcmpl-fake{next(self._ids)}",
            "created": int(time.time()),
            "model": request.model,
        }
        if body.get("stream") is True:
            options = body.get("stream_options")
            usage = isinstance(options, dict) and options.get("include_usage") is True
            work = self._stream(send, request, head, usage)
        else:
            work = self._complete(send, request, head)
        await self._until_disconnect(work, receive)

    async def _until_disconnect(self, work: Coroutine[Any, Any, None], receive: Receive) -> None:
        """Run ``work``; cancel it if the client goes away first."""
        task = asyncio.ensure_future(work)
        watcher = asyncio.ensure_future(_wait_disconnect(receive))
        try:
            await asyncio.wait((task, watcher), return_when=asyncio.FIRST_COMPLETED)
        finally:
            watcher.cancel()
            if not task.done():
                self.disconnects += 1
                task.cancel()
            await asyncio.wait((task, watcher))
        if not task.cancelled():
            task.result()

    def _events(self, request: ChatRequest) -> AsyncIterator[Chunk | Fault]:
        if isinstance(self.provider, ScriptedModel):
            return self.provider.events(request)
        return self.provider.stream(request)

    async def _stream(
        self, send: Send, request: ChatRequest, head: JSONObject, usage: bool
    ) -> None:
        events = self._events(request)
        try:
            first = await anext(events, None)
        except UpstreamError as exc:
            await _close(events)
            await _send_error(send, exc)
            return
        writer = _SSEWriter(
            send, {**head, "object": "chat.completion.chunk"}, self.reasoning_field, usage
        )
        await writer.start()
        try:
            broken = await _write_events(writer, first, events)
        except UpstreamError as exc:
            await writer.error(exc)
            return
        finally:
            await _close(events)
        if not broken:
            await writer.end()

    async def _complete(self, send: Send, request: ChatRequest, head: JSONObject) -> None:
        events = self._events(request)
        completion = _Completion()
        try:
            async for event in events:
                if isinstance(event, BreakStream):
                    await _send_broken(send)
                    return
                if isinstance(event, InvalidChunk):
                    await _send_body(send, 200, event.data.encode(), _JSON_HEADERS)
                    return
                if isinstance(event, Stall):
                    await asyncio.sleep(event.seconds)
                else:
                    completion.add(event)
        except UpstreamError as exc:
            await _send_error(send, exc)
            return
        finally:
            await _close(events)
        answer = completion.json({**head, "object": "chat.completion"}, self.reasoning_field)
        await _send_json(send, 200, _dumps(answer))


CHECKPOINT_EVERY = 32  # events written between chances for the disconnect watcher to run


async def _write_events(
    writer: _SSEWriter, first: Chunk | Fault | None, events: AsyncIterator[Chunk | Fault]
) -> bool:
    """Write every event; ``True`` if the stream was broken off. Every few events other tasks
    get a turn: neither a scripted answer nor a send to a client already gone waits, and the
    watcher that stops the answer when its client goes away must get to run."""
    if first is None:
        return False
    if not await writer.play(first):
        return True
    written = 1
    async for event in events:
        if not await writer.play(event):
            return True
        written += 1
        if written % CHECKPOINT_EVERY == 0:
            await asyncio.sleep(0)
    return False


def _model_json(info: ModelInfo) -> JSONObject:
    entry: JSONObject = {
        "id": info.id,
        "object": "model",
        "created": info.created,
        "owned_by": info.owned_by,
    }
    if info.context_window is not None:
        entry["max_model_len"] = info.context_window
    return entry


def create_backend_app(
    provider: Provider, *, models: Sequence[str] | None = None, tokenize: bool = True
) -> ASGIApp:
    """The ASGI app of a :class:`FakeBackend` (use the class to see what it received)."""
    return FakeBackend(provider, models=models, tokenize=tokenize).app
