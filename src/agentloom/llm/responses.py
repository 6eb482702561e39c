"""The Responses path: one call as ``POST /responses`` (streamed), read back as SDK events.

Two state modes (the LLM's ``state_mode``):

* ``stateless`` (default): every call replays the whole history with ``store: false``; an
  assistant message's ``reasoning_items`` are sent back exactly as the server returned them, and
  with ``encrypted_reasoning`` the call asks for ``include: ["reasoning.encrypted_content"]`` so
  a server that keeps nothing can still continue its reasoning.
* ``stateful`` (with a :class:`ConversationState` passed to each call): ``store: true``; a call
  continuing a stored response sends the instructions, only ``messages[state.sent:]`` and
  ``previous_response_id``. When the response completes the state is advanced to
  ``(response.id, len(messages) + 1)``: the ``+ 1`` is the assistant message the caller appends
  to its history (``messages + [response.message]``) before the next call. Keep to that
  contract: pass the same, growing message list each time.

A continuation the server rejects as ``previous_response_not_found`` (expired, deleted, another
server) resets the state and is retried once with the whole history, before anything is yielded.
Every failure leaves as an :mod:`agentloom.errors` ``UpstreamError`` subclass. Nothing here logs
request or response items: encrypted reasoning never reaches a log.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from typing import Final, cast

import anyio
import openai
from openai import AsyncStream
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseErrorEvent,
    ResponseFailedEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionToolCall,
    ResponseIncompleteEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseReasoningItem,
    ResponseReasoningSummaryTextDeltaEvent,
    ResponseReasoningTextDeltaEvent,
    ResponseRefusalDeltaEvent,
    ResponseStreamEvent,
    ResponseTextDeltaEvent,
)

from agentloom.errors import UpstreamError, UpstreamTimeoutError
from agentloom.inference.openai_compatible import INFERENCE, status_error
from agentloom.json_types import JSONObject
from agentloom.llm.completions import chat_request
from agentloom.llm.estimate import estimated_usage
from agentloom.llm.responses_request import ResponsesCall, request_extra_body, request_params
from agentloom.llm.strict_schema import drop_added_nulls, sent_strict
from agentloom.llm.types import (
    FunctionTool,
    LLMCompleted,
    LLMEvent,
    LLMResponse,
    Message,
    MessageToolCall,
    Metrics,
    ReasoningDeltaEvent,
    ReasoningItem,
    TextDeltaEvent,
    ToolCallEvent,
)
from agentloom.redact import redact_url
from agentloom.upstream import Failure, upstream_error

__all__ = ["ResponsesCall", "llm_response", "stream_responses"]

EXPIRED: Final = "previous_response_not_found"
# in-stream errors carry a code but no HTTP status: the status each code stands for
_CODE_STATUS: Final = {
    "rate_limit_exceeded": 429,
    "context_length_exceeded": 400,
    "invalid_prompt": 400,
    "invalid_request_error": 400,
    EXPIRED: 404,
}
_INCOMPLETE: Final = {"max_output_tokens": "length", "content_filter": "content_filter"}


class _Expired(Exception):
    """The server no longer holds the response a call continues."""

    def __init__(self, error: UpstreamError) -> None:
        super().__init__(error.message)
        self.error = error


async def stream_responses(
    client: openai.AsyncOpenAI, call: ResponsesCall
) -> AsyncGenerator[LLMEvent, None]:
    """Stream one Responses call as SDK events, ending with :class:`LLMCompleted`."""
    started = time.perf_counter()
    yielded = False
    try:
        async with aclosing(_attempt(client, call, started)) as events:
            async for event in events:
                yielded = True
                yield event
        return
    except _Expired as expired:
        if yielded or call.state is None:
            raise expired.error from expired.__cause__
        call.state.reset()  # the retry sends the whole history (and stores it again)
    async with aclosing(_attempt(client, call, started)) as events:
        async for event in events:
            yield event


async def _attempt(
    client: openai.AsyncOpenAI, call: ResponsesCall, started: float
) -> AsyncGenerator[LLMEvent, None]:
    try:
        params = request_params(call)
        stream = await client.responses.create(**params, extra_body=request_extra_body(call))
    except openai.APIError as exc:
        raise _api_error(exc, call, client) from exc
    reader = _Reader(call, started, strict_schemas(call.tools))
    try:
        async for event in stream:
            for out in reader.read(event):
                yield out
            if reader.done:
                return
    except openai.APIError as exc:
        raise _api_error(exc, call, client) from exc
    finally:
        await _close(stream)
    raise UpstreamError("the model server ended the stream before the response was finished")


async def _close(stream: AsyncStream[ResponseStreamEvent]) -> None:
    with anyio.CancelScope(shield=True):
        await stream.close()


# --- reading the stream ----------------------------------------------------------------------


def strict_schemas(tools: Sequence[FunctionTool]) -> dict[str, JSONObject]:
    """The own schemas of the tools sent strict on this path (by default, all that can be)."""
    return {t.name: t.parameters for t in tools if sent_strict(t, default=True) is not None}


@dataclass
class _Reader:
    call: ResponsesCall
    started: float
    strict: Mapping[str, JSONObject]
    first_token: float | None = None
    announced: set[str] = field(default_factory=set)  # call ids already sent as ToolCallEvent
    done: bool = False

    def read(self, event: ResponseStreamEvent) -> list[LLMEvent]:
        if isinstance(event, ResponseTextDeltaEvent | ResponseRefusalDeltaEvent):
            return self._mark([TextDeltaEvent(event.delta)])
        if isinstance(event, ResponseReasoningTextDeltaEvent):
            return self._mark([ReasoningDeltaEvent(event.delta)])
        if isinstance(event, ResponseReasoningSummaryTextDeltaEvent):
            return self._mark([ReasoningDeltaEvent(event.delta)])
        if isinstance(event, ResponseFunctionCallArgumentsDeltaEvent):
            return self._mark([])
        if isinstance(event, ResponseOutputItemDoneEvent):
            return self._mark(self._calls([event.item]))
        return self._terminal(event)

    def _terminal(self, event: ResponseStreamEvent) -> list[LLMEvent]:
        if isinstance(event, ResponseCompletedEvent | ResponseIncompleteEvent):
            return self._completed(event.response)
        if isinstance(event, ResponseFailedEvent):
            error = event.response.error
            code = error.code if error is not None else None
            raise _reported(code, error.message if error is not None else "", self.call)
        if isinstance(event, ResponseErrorEvent):
            raise _reported(event.code, event.message, self.call, param=event.param)
        return []

    def _mark(self, events: list[LLMEvent]) -> list[LLMEvent]:
        if self.first_token is None:
            self.first_token = time.perf_counter()
        return events

    def _calls(self, items: list[object]) -> list[LLMEvent]:
        events: list[LLMEvent] = []
        for item in items:
            if isinstance(item, ResponseFunctionToolCall) and item.call_id not in self.announced:
                self.announced.add(item.call_id)
                events.append(ToolCallEvent(_tool_call(item, self.strict)))
        return events

    def _completed(self, response: Response) -> list[LLMEvent]:
        self.done = True
        call = self.call
        if call.stateful and call.state is not None:
            call.state.advance(response.id, len(call.messages) + 1, call.model)
        answer = llm_response(response, self._metrics(response), self.strict)
        if response.usage is None:  # the server reported none: an estimate, marked as one
            answer = replace(answer, metrics=self._estimated(answer))
        return [*self._calls(list(response.output)), LLMCompleted(answer)]

    def _metrics(self, response: Response) -> Metrics:
        now = time.perf_counter()
        usage = response.usage
        first = self.first_token
        return Metrics(
            path="responses",
            model=self.call.model,
            latency_ms=(now - self.started) * 1000,
            input_tokens=usage.input_tokens if usage else 0,
            output_tokens=usage.output_tokens if usage else 0,
            cached_tokens=usage.input_tokens_details.cached_tokens if usage else 0,
            reasoning_tokens=usage.output_tokens_details.reasoning_tokens if usage else 0,
            time_to_first_token_ms=None if first is None else (first - self.started) * 1000,
        )

    def _estimated(self, answer: LLMResponse) -> Metrics:
        call = self.call
        request = chat_request(call.model, call.messages, call.tools, call.options)
        usage = estimated_usage(request, answer.message)
        return replace(
            answer.metrics,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            reasoning_tokens=usage.reasoning_tokens,
            tokens_estimated=True,
        )


# --- the response ----------------------------------------------------------------------------


def llm_response(
    response: Response, metrics: Metrics, strict: Mapping[str, JSONObject] | None = None
) -> LLMResponse:
    """The SDK's answer for a Responses ``Response``: its text, function calls and reasoning
    (text, and the reasoning items to replay, ``encrypted_content`` included). ``strict``: the
    own schemas of the tools sent strict, by name (their calls' added ``null`` s dropped)."""
    output = response.output
    texts = [_message_text(item) for item in output if isinstance(item, ResponseOutputMessage)]
    thoughts = [item for item in output if isinstance(item, ResponseReasoningItem)]
    calls = [item for item in output if isinstance(item, ResponseFunctionToolCall)]
    message = Message(
        "assistant",
        "".join(texts) or None,
        tool_calls=tuple(_tool_call(c, strict or {}) for c in calls),
        reasoning="\n\n".join(filter(None, map(_reasoning_text, thoughts))) or None,
        reasoning_items=tuple(_reasoning_item(item) for item in thoughts),
    )
    return LLMResponse(
        message,
        metrics,
        finish_reason=_finish_reason(response, bool(calls)),
        response_id=response.id,
        model=response.model,
        raw_response=response,
    )


def _message_text(item: ResponseOutputMessage) -> str:
    parts = item.content
    return "".join(part.text if part.type == "output_text" else part.refusal for part in parts)


def _reasoning_text(item: ResponseReasoningItem) -> str:
    parts = item.content or item.summary
    return "".join(part.text for part in parts)


def _reasoning_item(item: ResponseReasoningItem) -> ReasoningItem:
    return ReasoningItem(
        id=item.id,
        summary=tuple(part.text for part in item.summary),
        encrypted_content=item.encrypted_content,
        item=cast("JSONObject", item.to_dict(mode="json")),  # what the server sent, verbatim
    )


def _tool_call(item: ResponseFunctionToolCall, strict: Mapping[str, JSONObject]) -> MessageToolCall:
    arguments = item.arguments or "{}"
    schema = strict.get(item.name)
    if schema is not None:
        arguments = drop_added_nulls(arguments, schema)
    return MessageToolCall(item.call_id, item.name, arguments, origin="responses", raw=item)


def _finish_reason(response: Response, called: bool) -> str:
    if response.status == "incomplete":
        details = response.incomplete_details
        reason = details.reason if details is not None else None
        return _INCOMPLETE.get(reason or "", "length")
    return "tool_calls" if called else "stop"


# --- errors ----------------------------------------------------------------------------------


def _api_error(exc: openai.APIError, call: ResponsesCall, client: openai.AsyncOpenAI) -> Exception:
    if isinstance(exc, openai.APIStatusError):
        error = status_error(exc)
        return _Expired(error) if _expires(exc.code, call) else error
    where = redact_url(str(client.base_url).rstrip("/"))
    if isinstance(exc, openai.APITimeoutError):
        return UpstreamTimeoutError(f"the model server at {where} did not answer in time")
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return UpstreamError(f"could not reach the model server at {where}: {cause}")
    return _reported(exc.code, exc.message, call, param=exc.param)


def _reported(
    code: str | None, message: str, call: ResponsesCall, *, param: str | None = None
) -> Exception:
    """An error the server reported inside the stream (``response.failed`` or ``error``)."""
    text = message or "the model server failed the response"
    failure = Failure(_CODE_STATUS.get(code or ""), text, code=code, param=param)
    error = upstream_error(INFERENCE, failure, context_window=True)
    return _Expired(error) if _expires(code, call) else error


def _expires(code: str | None, call: ResponsesCall) -> bool:
    return code == EXPIRED and call.continuation is not None
