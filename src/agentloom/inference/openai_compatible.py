"""A provider for any OpenAI-compatible chat completions backend (vLLM, Ollama, llama.cpp ...).

Streamed requests go out on agentloom's lean keep-alive client (:mod:`agentloom.inference.http`),
or the ``openai`` SDK (behind proxies, or when configured) with ``cast_to=object``. The body is
built by :mod:`agentloom.inference.chat_body`, the stream read by
:mod:`agentloom.inference.chat_chunks`; this module sends, maps failures and lists models.

Every failure leaves as an :mod:`agentloom.errors` upstream error, never an SDK or HTTP type.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import aclosing, asynccontextmanager
from typing import Final, TypeVar

import anyio
import httpx2
import openai
from openai import AsyncStream, RequestOptions

from agentloom import __version__, json_codec
from agentloom.errors import (
    UpstreamError,
    UpstreamTimeoutError,
    UpstreamUnavailableError,
)
from agentloom.inference.base import (
    CHAT_PATH,
    RESPONSES_PATH,
    ChatRequest,
    Chunk,
    ModelInfo,
    ProviderConfig,
    TokenCount,
    ToolCallDelta,
    Usage,
)
from agentloom.inference.chat_body import chat_body
from agentloom.inference.chat_chunks import CallIndexes, InvalidChunk, chunks_of
from agentloom.inference.counting import BackendTokenCounter, tokenize_path
from agentloom.inference.deadlines import Which, Within, bounded
from agentloom.inference.http import (
    HTTPConnectError,
    HTTPError,
    HTTPTimeout,
    Origin,
    Pool,
    iter_sse_batches,
)
from agentloom.offload import off_loop
from agentloom.redact import redact_url
from agentloom.text import clip
from agentloom.tls import client_context
from agentloom.upstream import MAX_MESSAGE, Failure, retry_after, upstream_error

__all__ = ["INFERENCE", "OpenAICompatibleProvider", "status_error"]

_OPTIONS: Final[RequestOptions] = {"security": {"bearer_auth": True}}
_LIMITS: Final = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
LARGE_REQUEST_MESSAGES: Final = 256  # messages from which a body is built off the event loop
B = TypeVar("B")
_ANSWER_LIMIT: Final = 64 * 1024 * 1024  # a /tokenize answer lists every token id of the input


# --- request ---------------------------------------------------------------------------------


def _encoded_body(request: ChatRequest) -> bytes:
    return json_codec.dumps(chat_body(request))


async def _built(request: ChatRequest, build: Callable[[ChatRequest], B]) -> B:
    """``build(request)``: in a worker thread for a long history, so that encoding thousands of
    messages does not hold up the event loop."""
    return await off_loop(len(request.messages) >= LARGE_REQUEST_MESSAGES, build, request)


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


def _invalid_answer(answer: object) -> UpstreamError:
    shown = "a body that is not JSON" if answer is None else clip(json.dumps(answer), MAX_MESSAGE)
    return UpstreamError(f"the inference backend sent an invalid chat completion: {shown}")


def _invalid_response(answer: object) -> UpstreamError:
    shown = "a body that is not JSON" if answer is None else clip(json.dumps(answer), MAX_MESSAGE)
    return UpstreamError(f"the inference backend sent an invalid response object: {shown}")


def _json_or_none(raw: bytes) -> object:
    """A whole JSON answer, or ``None`` when it is not JSON (a count is then not read from it)."""
    try:
        return json_codec.loads(raw)
    except ValueError:  # not JSON, or not UTF-8
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
            http_client=httpx2.AsyncClient(
                verify=client_context(), timeout=timeout, limits=_LIMITS, follow_redirects=True
            ),
        )
        base_url = str(self._client.base_url).rstrip("/")
        self._where = redact_url(base_url)  # shown in errors
        self._pool = _lean_pool(config, base_url)
        base = self._client.base_url
        self._tokenize_url = str(base.copy_with(path=tokenize_path(base.path)))
        self._counter = BackendTokenCounter(
            config.name, config.token_count, tokenize=self._tokenize, complete=self._complete
        )

    def stream(self, request: ChatRequest) -> AsyncGenerator[Chunk, None]:
        """The answer's chunks, each delta the backend's own piece, under the provider's
        deadlines (:mod:`.deadlines`). A ``collected`` answer (no one sees its deltas) is asked
        for whole, not streamed: one JSON document to read (under the total deadline only)
        instead of a chunk per token, and the same chunks made of it."""
        if request.collected:
            return self._whole(request)
        return bounded(self._stream(request), self.config.deadlines, self._deadline_passed)

    async def _stream(self, request: ChatRequest) -> AsyncGenerator[Chunk, None]:
        if self._pool is None:
            batches = self._sdk_events(await _built(request, chat_body))
        else:
            batches = self._lean_events(await _built(request, _encoded_body))
        usage: Usage | None = None
        calls = CallIndexes()
        async with aclosing(batches):
            async for batch in batches:
                chunks: list[Chunk] = []
                bad: object = None
                for data in batch:
                    try:
                        found, seen = chunks_of(data)
                    except InvalidChunk:
                        bad = data  # raised once what came before it is handed on
                        break
                    usage = seen or usage
                    chunks += found
                for chunk in chunks:
                    yield calls.of(chunk) if isinstance(chunk, ToolCallDelta) else chunk
                if bad is not None:
                    raise _invalid_chunk(bad)
        if usage is not None:
            yield usage

    async def _whole(self, request: ChatRequest) -> AsyncGenerator[Chunk, None]:
        seconds = self.config.deadlines.total
        try:
            with Within(seconds) as scope:
                answer = await self._answer(request)
        except TimeoutError:
            if not scope.expired():
                raise
            raise self._deadline_passed("total_timeout", seconds) from None
        if isinstance(answer, dict) and answer.get("error"):
            raise _reported_error(answer["error"])
        try:
            chunks, usage = chunks_of(answer, "message")
        except InvalidChunk:
            raise _invalid_answer(answer) from None
        calls = CallIndexes()
        for chunk in chunks:
            yield calls.of(chunk) if isinstance(chunk, ToolCallDelta) else chunk
        if usage is not None:
            yield usage

    async def _answer(self, request: ChatRequest) -> object:
        """The whole chat completion, decoded."""
        if self._pool is None:
            return await self._sdk_post("/chat/completions", await _built(request, chat_body))
        payload = await _built(request, _encoded_body)
        return await self._lean_post("/chat/completions", payload)

    # --- Chat Completions passed through (agentloom's /v1/chat/completions) ------------------

    async def complete(self, body: dict[str, object], path: str = CHAT_PATH) -> dict[str, object]:
        async with self._within_total():
            return await self._complete_whole(body, path)

    async def _complete_whole(self, body: dict[str, object], path: str) -> dict[str, object]:
        if self._pool is None:
            answer = await self._sdk_post(path, body)
        else:
            answer = await self._lean_post(path, json_codec.dumps(body))
        if isinstance(answer, dict) and answer.get("error"):
            raise _reported_error(answer["error"])
        if not isinstance(answer, dict):
            raise _invalid_answer(answer)
        return answer

    def stream_data(
        self, body: dict[str, object], path: str = CHAT_PATH
    ) -> AsyncGenerator[list[str], None]:
        return bounded(self._stream_data(body, path), self.config.deadlines, self._deadline_passed)

    async def _stream_data(
        self, body: dict[str, object], path: str
    ) -> AsyncGenerator[list[str], None]:
        if self._pool is None:
            async for decoded in self._sdk_events(body, path):
                yield [json_codec.dumps(data).decode() for data in decoded]
            return
        async with aclosing(self._lean_data(json_codec.dumps(body), path)) as batches:
            async for batch in batches:
                yield batch

    # --- Responses passed through (agentloom's /v1/responses, ``responses`` models) ----------

    async def respond(self, body: dict[str, object]) -> dict[str, object]:
        """The whole Response object; a failed one (its ``error`` set) is an answer too."""
        async with self._within_total():
            if self._pool is None:
                answer = await self._sdk_post(RESPONSES_PATH, body)
            else:
                answer = await self._lean_post(RESPONSES_PATH, json_codec.dumps(body))
        if not isinstance(answer, dict):
            raise _invalid_response(answer)
        return answer

    def respond_stream(self, body: dict[str, object]) -> AsyncGenerator[list[str], None]:
        return self.stream_data(body, RESPONSES_PATH)

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

    async def _lean_events(self, payload: bytes) -> AsyncGenerator[list[object], None]:
        async with aclosing(self._lean_data(payload)) as batches:
            async for batch in batches:
                decoded: list[object] = []
                try:
                    decoded += (_decoded(data) for data in batch)
                finally:  # what came before a bad chunk still counts
                    if decoded:
                        yield decoded

    async def _lean_data(
        self, payload: bytes, path: str = CHAT_PATH
    ) -> AsyncGenerator[list[str], None]:
        """The streamed answer's ``data:`` payloads (``[DONE]`` left out), a read at a time."""
        assert self._pool is not None
        started = False
        try:
            async with self._pool.post(path, payload) as response:
                if not 200 <= response.status < 300:
                    raw = await response.read()
                    raise _http_status_error(response.status, response.headers, raw)
                started = True
                async for batch in iter_sse_batches(response.iter_bytes()):
                    data = [line for line in batch if line != "[DONE]"]
                    if data:
                        yield data
        except HTTPError as exc:
            raise self._lean_error(exc, started) from exc

    async def _lean_post(self, path: str, payload: bytes, *, root: bool = False) -> object:
        """POST the JSON ``payload``, read the whole JSON answer (``None`` if it is not JSON)."""
        assert self._pool is not None
        try:
            response, raw = await self._pool.fetch(path, payload, root=root, limit=_ANSWER_LIMIT)
        except HTTPError as exc:
            raise self._lean_error(exc, started=False) from exc
        if not 200 <= response.status < 300:
            raise _http_status_error(response.status, response.headers, raw)
        return _json_or_none(raw)

    def _lean_error(self, exc: HTTPError, started: bool) -> UpstreamError:
        if isinstance(exc, HTTPTimeout):
            return self._timeout_error(started)
        if isinstance(exc, HTTPConnectError):
            return self._unreachable(str(exc))
        if not started:
            return UpstreamError(f"could not reach the inference backend at {self._where}: {exc}")
        return UpstreamError(f"the inference backend closed the stream before it finished: {exc}")

    @asynccontextmanager
    async def _within_total(self) -> AsyncIterator[None]:
        """A whole answer under the provider's ``total_timeout``."""
        seconds = self.config.deadlines.total
        try:
            async with asyncio.timeout(seconds) as scope:
                yield
        except TimeoutError:
            if not scope.expired():
                raise
            raise self._deadline_passed("total_timeout", seconds) from None

    def _deadline_passed(self, which: Which, seconds: float) -> UpstreamTimeoutError:
        what = _DEADLINES[which]
        return UpstreamTimeoutError(
            f"the inference backend at {self._where} {what} {seconds:g} s"
            f" ([[providers]] {which} of '{self.config.name}')"
        )

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
        path = tokenize_path(self._pool.origin.base_path)
        return await self._lean_post(path, json_codec.dumps(body), root=True)

    async def _complete(self, body: dict[str, object]) -> object:
        if self._pool is None:
            return await self._sdk_post("/chat/completions", body)
        return await self._lean_post("/chat/completions", json_codec.dumps(body))

    # --- the SDK -----------------------------------------------------------------------------

    async def _sdk_post(self, url: str, body: dict[str, object]) -> object:
        """POST ``body`` (``url`` absolute or under the base URL) and decode the JSON answer."""
        try:
            return await self._client.post(url, body=body, cast_to=object, options=_OPTIONS)
        except openai.APIError as exc:
            raise self._open_error(exc) from exc
        except (json.JSONDecodeError, UnicodeDecodeError):  # a JSON content type, a non-JSON body
            return None

    async def _sdk_events(
        self, body: dict[str, object], path: str = CHAT_PATH
    ) -> AsyncGenerator[list[object], None]:
        events = await self._open(body, path)
        try:
            async for data in events:
                yield [data]
        except openai.APIError as exc:
            raise self._stream_error(exc) from exc
        except json.JSONDecodeError as exc:
            raise _invalid_chunk(exc.doc) from exc
        finally:
            with anyio.CancelScope(shield=True):
                await events.close()

    async def _open(self, body: dict[str, object], path: str) -> AsyncStream[object]:
        try:
            return await self._client.post(
                path,
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
            return self._unreachable(_cause(exc))
        return _reported_error(exc.body)

    def _unreachable(self, cause: str) -> UpstreamUnavailableError:
        """The backend is down: a 503 naming it (its provider and URL) and why."""
        return UpstreamUnavailableError(
            f"could not reach the inference backend {self.config.name!r} at {self._where}: {cause}"
        )

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
        value = json_codec.loads(data)
    except ValueError as exc:
        raise _invalid_chunk(data) from exc
    if isinstance(value, dict) and value.get("error"):
        raise _reported_error(value["error"])
    return value


_DEADLINES: dict[Which, str] = {
    "first_byte_timeout": "sent nothing within",
    "chunk_timeout": "went silent mid-answer for",
    "total_timeout": "did not finish its answer within",
}


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
