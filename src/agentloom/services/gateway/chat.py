"""Chat Completions passed through to the backend that serves the model (``/v1/chat/completions``).

The client's request goes to the provider as it was sent, its ``model`` replaced by the backend's
own id, under the caller's project: its model permissions and rate limits (the catalog's
``resolve``), its usage recorded when the call ends. A streamed answer is handed on a network
read at a time, each event as it came (:mod:`agentloom.server.sse` frames them); an event is
decoded only when it carries usage, or when the model id the client used has to be written back
into it. The usage chunk is always asked of the backend (the ledger needs it) and dropped again
when the client did not ask for it.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing

from agentloom import json_codec
from agentloom.api.chat_completions import ChatCompletionRequest, PassedRequest
from agentloom.engine.guardrails import Guard
from agentloom.engine.spans import usage_attributes
from agentloom.errors import InvalidRequestError, UpstreamError
from agentloom.frozen import frozen
from agentloom.ids import new_id
from agentloom.inference import base as inf
from agentloom.inference.base import CHAT_PATH, ChatCompletions, Usage, chat_completions_of
from agentloom.inference.catalog import ModelCatalog
from agentloom.inference.chat_chunks import InvalidChunk, usage_of
from agentloom.inference.router import RoutedModel
from agentloom.metrics import Metrics
from agentloom.request_entry import current_entry
from agentloom.safety.service import Decision
from agentloom.services.gateway.chat_guard import ChatGuards, GuardedStream, refused, screened
from agentloom.services.gateway.stored import Assembled, StoredCompletions
from agentloom.services.organization.usage import UsageLedger
from agentloom.tracing import active


@frozen
class _Call:
    provider: ChatCompletions
    path: str  # CHAT_PATH, or COMPLETIONS_PATH for the legacy API
    body: dict[str, object]  # what the backend is sent
    model: str  # the id the client used, written back into answers
    model_field: str | None  # ``"model":"<the client's id>"``, written back into its chunks
    # when the backend calls the model otherwise (None: it does not)
    wants_usage: bool
    provider_name: str
    started_ns: int  # when the call began (what its span says)
    stored_id: str | None = None  # ``store: true``: the id the answer is kept (and sent) under


class ChatGateway:
    def __init__(
        self,
        catalog: ModelCatalog,
        usage: UsageLedger | None,
        guards: ChatGuards | None = None,
        metrics: Metrics | None = None,
        stored: StoredCompletions | None = None,
    ) -> None:
        """``stored``: where completions asked with ``store: true`` are kept."""
        self._metrics = metrics
        self._catalog = catalog
        self._usage = usage
        self._guards = guards
        self._stored = stored

    async def complete(
        self, request: PassedRequest, body: dict[str, object], path: str = CHAT_PATH
    ) -> bytes:
        """The whole answer, as JSON."""
        call = await self._call(request, body, path)
        guard = await self._guard(request, body)
        if isinstance(guard, Decision):
            return json_codec.dumps(refused(call.model, guard, legacy=path != CHAT_PATH))
        usage: Usage | None = None
        ok = False
        try:
            answer = await call.provider.complete(call.body, call.path)
            usage, ok = _usage(answer), True
        except UpstreamError as exc:
            _raise_unserved(call, exc)
            raise
        finally:
            self._record(call, usage, ok=ok)
        if guard is not None:
            answer = await screened(guard, answer)
        if call.model_field and "model" in answer:
            answer["model"] = call.model
        if call.stored_id is not None:
            answer["id"] = call.stored_id
            await self._keep(request, answer)
        return json_codec.dumps(answer)

    async def stream(
        self, request: PassedRequest, body: dict[str, object], path: str = CHAT_PATH
    ) -> AsyncIterator[list[bytes]]:
        """The streamed answer's ``data:`` payloads, a network read at a time. The backend has
        answered before this returns: a failure to start is raised here, a later one by the
        iterator."""
        call = await self._call(request, body, path)
        guard = await self._guard(request, body)
        if isinstance(guard, Decision):
            return _refusal(call, guard)
        data = call.provider.stream_data(call.body, call.path)
        try:
            first: list[str] = await anext(data, [])
            entry = current_entry()
            if entry is not None:
                entry.first_output(time.perf_counter())
        except UpstreamError as exc:
            self._record(call, None, ok=False)
            _raise_unserved(call, exc)
            raise
        except BaseException:
            self._record(call, None, ok=False)
            raise
        if guard is not None:
            payloads = self._guarded(call, guard, _starting(first, data))
        else:
            payloads = self._payloads(call, data, first)
        if call.stored_id is None:
            return payloads
        return self._storing(request, call.stored_id, payloads)

    async def _storing(
        self, request: PassedRequest, stored_id: str, payloads: AsyncIterator[list[bytes]]
    ) -> AsyncGenerator[list[bytes], None]:
        """The stream as the client gets it, its chunks under ``stored_id``, kept whole once it
        ended (a stream the client left is not stored)."""
        assembled = Assembled()
        async with aclosing(payloads):  # type: ignore[type-var]
            async for batch in payloads:
                yield [_stored_chunk(payload, stored_id, assembled) for payload in batch]
        await self._keep(request, assembled.completion())

    async def _keep(self, request: PassedRequest, answer: dict[str, object]) -> None:
        assert isinstance(request, ChatCompletionRequest), "only chat completions are stored"
        assert self._stored is not None, "a stored id is given only with a store"
        await self._stored.keep(request, answer)

    async def _guard(
        self, request: PassedRequest, body: dict[str, object]
    ) -> Guard | Decision | None:
        """The call's guard (``None``: no guardrails), or the decision that blocked its input."""
        guard = self._guards.guard(request, body) if self._guards is not None else None
        if guard is None:
            return None
        decision = await guard.check_input()
        return decision if decision.blocked else guard

    async def _call(self, request: PassedRequest, body: dict[str, object], path: str) -> _Call:
        resolved = await self._catalog.resolve(request.model)
        provider = chat_completions_of(resolved.provider)
        if provider is None:
            raise InvalidRequestError(
                f"The model '{request.model}' is served by a provider that does not take Chat"
                " Completions requests; use it through /v1/responses.",
                param="model",
                code="model_not_supported",
            )
        backend_id = resolved.model.backend_id
        sent = {**body, "model": backend_id}
        stored_id = None
        if isinstance(request, ChatCompletionRequest) and request.store:
            if self._stored is None:
                raise InvalidRequestError(
                    "This server does not store chat completions.", param="store"
                )
            stored_id = new_id("chatcmpl", separator="-")
            for kept_here in ("store", "metadata"):  # agentloom keeps it, not the backend
                sent.pop(kept_here, None)
        if request.stream:
            sent["stream_options"] = {**_options(body), "include_usage": True}
        renamed = backend_id != request.model or isinstance(resolved.provider, RoutedModel)
        entry = current_entry()
        if entry is not None:
            entry.user = _user(body)
            entry.response_id = stored_id  # the log's row links the completion kept
        return _Call(
            provider,
            path,
            sent,
            request.model,
            '"model":' + json_codec.dumps(request.model).decode() if renamed else None,
            request.wants_usage,
            resolved.model.provider_name,
            time.time_ns(),
            stored_id,
        )

    async def _payloads(
        self, call: _Call, data: AsyncIterator[list[str]], first: list[str]
    ) -> AsyncGenerator[list[bytes], None]:
        usage: Usage | None = None
        ok = False
        try:
            async with aclosing(data):  # type: ignore[type-var]
                batch: list[str] | None = first
                while batch is not None:
                    out: list[bytes] = []
                    for event in batch:
                        kept, seen = _event(call, event)
                        usage = seen or usage
                        if kept is not None:
                            out.append(kept)
                    if out:
                        yield out
                    batch = await anext(data, None)
            ok = True
        finally:
            self._record(call, usage, ok=ok)

    async def _guarded(
        self, call: _Call, guard: Guard, data: AsyncIterator[list[str]]
    ) -> AsyncGenerator[list[bytes], None]:
        """The stream read into chunks, released only once checked, written again."""
        stream = GuardedStream(call.model, call.wants_usage)
        released = guard.output(stream.chunks(data), frozenset(), on_block=lambda: None)
        ok = False
        try:
            async with aclosing(released):  # type: ignore[type-var]
                async for chunk in released:
                    payload = stream.payload(chunk, guard.refused)
                    if payload is not None:
                        yield [payload]
            ok = True
            usage = stream.usage_payload()
            if usage is not None:
                yield [usage]
        finally:
            self._record(call, stream.usage, ok=ok)

    def _record(self, call: _Call, usage: Usage | None, *, ok: bool) -> None:
        entry = current_entry()
        if entry is not None:
            entry.deployment = call.provider_name
        if self._usage is not None:
            self._usage.record_call(call.model, usage)
        if self._metrics is not None:
            seconds = (time.time_ns() - call.started_ns) / 1e9
            self._metrics.model_called(call.provider_name, call.model, seconds, ok)
        tracing = active()
        if tracing is not None:
            attributes = {
                "gen_ai.operation.name": "chat" if call.path == CHAT_PATH else "text_completion",
                "gen_ai.provider.name": call.provider_name,
                "gen_ai.request.model": call.model,
                **usage_attributes(usage),
            }
            name = f"{attributes['gen_ai.operation.name']} {call.model}"
            tracing.record(name, call.started_ns, attributes, kind=tracing.kind.CLIENT)


def _stored_chunk(payload: bytes, stored_id: str, assembled: Assembled) -> bytes:
    """A chunk of a stored completion: under the stored id, and added to what is kept."""
    try:
        chunk = json_codec.loads(payload)
    except ValueError:
        return payload  # not ours to judge: the client sees what was sent
    if not isinstance(chunk, dict):
        return payload
    chunk["id"] = stored_id
    assembled.add(chunk)
    return json_codec.dumps(chunk)


def _user(body: dict[str, object]) -> str | None:
    """Who the client says the end user is (``user``, or ``safety_identifier``)."""
    user = body.get("user") or body.get("safety_identifier")
    return user[:256] if isinstance(user, str) else None


def _options(body: dict[str, object]) -> dict[str, object]:
    options = body.get("stream_options")
    return dict(options) if isinstance(options, dict) else {}


def _event(call: _Call, event: str) -> tuple[bytes | None, Usage | None]:
    """One event as it is handed on (``None``: dropped, ``NaN`` written ``null``), and the
    usage it carries."""
    event = json_codec.finite(event)
    if '"usage"' not in event:
        if call.model_field is None:
            return event.encode(), None
        renamed = _renamed(event, call.model_field)
        if renamed is not None:
            return renamed.encode(), None
    try:
        chunk = json_codec.loads(event)
    except ValueError:
        return event.encode(), None  # not ours to judge: the client sees what was sent
    if not isinstance(chunk, dict):
        return event.encode(), None
    usage = _usage(chunk)
    if usage is not None and not call.wants_usage and not chunk.get("choices"):
        return None, usage  # asked for the ledger only
    if call.model_field and "model" in chunk:
        chunk["model"] = call.model
        return json_codec.dumps(chunk), usage
    return event.encode(), usage


_MODEL_KEY = '"model":'


def _renamed(event: str, field: str) -> str | None:
    """``event`` with its top-level ``model`` replaced by ``field``, without decoding it; or
    ``None`` when that is not certain (decode it then). The first ``"model":`` (followed by
    its string value, after one space or none, as backends write their chunks) is the
    top-level field when no object or array opened before it: a quote inside a JSON string is
    escaped, so the key cannot be read inside one."""
    start = event.find(_MODEL_KEY)
    if start < 0 or not event.startswith("{"):
        return None
    if event.find("{", 1, start) >= 0 or event.find("[", 1, start) >= 0:
        return None
    value = start + len(_MODEL_KEY)
    if event.startswith(" ", value):
        value += 1
    if not event.startswith('"', value):
        return None
    end = event.find('"', value + 1)
    if end < 0 or event[end - 1] == "\\":  # an escaped quote in the old id: decode instead
        return None
    return event[:start] + field + event[end + 1 :]


def _usage(answer: dict[str, object]) -> Usage | None:
    value = answer.get("usage")
    if not isinstance(value, dict):
        return None
    try:
        return usage_of(value)
    except InvalidChunk:
        return None


async def _starting(first: list[str], rest: AsyncIterator[list[str]]) -> AsyncIterator[list[str]]:
    yield first
    async with aclosing(rest):  # type: ignore[type-var]
        async for batch in rest:
            yield batch


async def _refusal(call: _Call, decision: Decision) -> AsyncIterator[list[bytes]]:
    """A stream that only refuses (the input was blocked: the backend was not called)."""
    stream = GuardedStream(call.model, wants_usage=False)
    yield [
        payload
        for chunk in (inf.RefusalDelta(decision.message), inf.Finish("stop"))
        if (payload := stream.payload(chunk, blocked=True)) is not None
    ]


def _raise_unserved(call: _Call, exc: UpstreamError) -> None:
    """A 404 of the backend for the legacy API says that it does not serve it: a 400."""
    if exc.status != 404 or call.path == CHAT_PATH:
        return
    raise InvalidRequestError(
        f"The backend of model '{call.model}' does not serve the legacy Completions API (it"
        f" answered 404 at {call.path}: {exc.message}); use /v1/chat/completions.",
        param="model",
        code="model_not_supported",
    ) from exc
