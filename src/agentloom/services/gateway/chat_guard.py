"""The server's default guardrails (``[safety] default_guardrails``) on Chat Completions passed
through: the new input is checked before the backend is called, the output before it reaches
the client, with the same shields and stream windows as a response's (:mod:`.engine.guardrails`).

A blocked input or output answers as OpenAI's content filter does: the message's ``refusal``
says why and ``finish_reason`` is ``content_filter``. A guarded stream is read into chunks,
held until checked (:class:`~agentloom.engine.output_guard.OutputGuard`) and written again as
``chat.completion.chunk`` s; unguarded streams are never decoded for this.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentloom import json_codec
from agentloom.api.chat_completions import CompletionRequest, PassedRequest
from agentloom.engine.guardrails import Guard, GuardPlan, Guardrails
from agentloom.errors import InvalidRequestError, UpstreamError
from agentloom.inference import base as inf
from agentloom.inference.chat_chunks import InvalidChunk, chunks_of
from agentloom.safety.service import Decision
from agentloom.text import clip
from agentloom.upstream import MAX_MESSAGE

CONTENT_FILTER = "content_filter"


class ChatGuards:
    """Makes the guard of one call (``None`` when the server has no default guardrails)."""

    def __init__(self, guardrails: Guardrails) -> None:
        self._guardrails = guardrails

    def guard(self, request: PassedRequest, body: Mapping[str, Any]) -> Guard | None:
        safety = self._guardrails.safety
        shields = safety.guardrails(None)
        if not shields:
            return None
        if body.get("n", 1) not in (1, None):
            raise _unguardable("'n' above 1", "n")
        if isinstance(request, CompletionRequest) and request.stream:
            raise _unguardable("A streamed legacy completion", "stream")
        text = request.new_input()
        if text is None:
            raise _unguardable("A prompt of token ids", "prompt")
        plan = GuardPlan(safety, shields, None, self._guardrails.window, input_text=text)
        return Guard(plan)


def _unguardable(what: str, param: str) -> InvalidRequestError:
    return InvalidRequestError(
        f"{what} is not supported while the server's guardrails check requests"
        " (use /v1/chat/completions with text messages, or /v1/responses).",
        param=param,
        code="unsupported_value",
    )


# --- whole answers ---------------------------------------------------------------------------


def refused(model: str, decision: Decision, *, legacy: bool = False) -> dict[str, object]:
    """An answer that only refuses (the input was blocked: no model call was made). A legacy
    completion has no ``refusal``: its text is empty."""
    choice: dict[str, object] = {"index": 0, "finish_reason": CONTENT_FILTER, "logprobs": None}
    if legacy:
        choice["text"] = ""
    else:
        choice["message"] = {"role": "assistant", "content": None, "refusal": decision.message}
    return {
        "id": "cmpl-refused" if legacy else "chatcmpl-refused",
        "object": "text_completion" if legacy else "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
    }


async def screened(guard: Guard, answer: dict[str, Any]) -> dict[str, Any]:
    """``answer`` with each choice's text checked; a blocked one becomes a refusal."""
    safety, shields = guard.plan.safety, guard.plan.output_shields()
    for choice in answer.get("choices") or []:
        if not isinstance(choice, dict):
            continue
        message = choice.get("message")
        if isinstance(message, dict) and isinstance(message.get("content"), str):
            decision = await safety.check(shields, message["content"], "assistant")
            if decision.blocked:
                message.update(content=None, refusal=decision.message)
                message.pop("tool_calls", None)
                choice["finish_reason"] = CONTENT_FILTER
        elif isinstance(choice.get("text"), str):  # a legacy completion
            decision = await safety.check(shields, choice["text"], "assistant")
            if decision.blocked:
                choice.update(text="", finish_reason=CONTENT_FILTER)
    return answer


# --- streams ---------------------------------------------------------------------------------


@dataclass
class GuardedStream:
    """A guarded stream's chunks written again as chat completion chunks, with the head (id,
    created, model) of the backend's first event."""

    model: str
    wants_usage: bool
    head: dict[str, object] = field(default_factory=dict)
    usage: inf.Usage | None = None
    _role_sent: bool = False

    async def chunks(self, data: AsyncIterator[list[str]]) -> AsyncIterator[inf.Chunk]:
        """The backend's events as chunks (the usage kept aside)."""
        async for batch in data:
            for event in batch:
                decoded = _decoded(event)
                if not self.head and isinstance(decoded, dict):
                    self.head = {k: decoded[k] for k in ("id", "created") if k in decoded}
                try:
                    found, usage = chunks_of(decoded)
                except InvalidChunk:
                    raise UpstreamError(
                        "the inference backend sent an invalid stream chunk: "
                        + clip(event, MAX_MESSAGE)
                    ) from None
                self.usage = usage or self.usage
                for chunk in found:
                    yield chunk

    def payload(self, chunk: inf.Chunk, blocked: bool) -> bytes | None:
        """One released chunk as a ``chat.completion.chunk`` (``None``: nothing to send)."""
        delta: dict[str, object] = {}
        finish: str | None = None
        if isinstance(chunk, inf.TextDelta):
            delta["content"] = chunk.text
        elif isinstance(chunk, inf.ReasoningDelta):
            delta["reasoning_content"] = chunk.text
        elif isinstance(chunk, inf.RefusalDelta):
            delta["refusal"] = chunk.text
        elif isinstance(chunk, inf.ToolCallDelta):
            delta["tool_calls"] = [_call(chunk)]
        elif isinstance(chunk, inf.Finish):
            finish = CONTENT_FILTER if blocked else chunk.reason
        else:
            return None
        if not self._role_sent:
            delta = {"role": "assistant", **delta}
            self._role_sent = True
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return _json(self._event([choice]))

    def usage_payload(self) -> bytes | None:
        if not self.wants_usage or self.usage is None:
            return None
        usage = self.usage
        counts = {
            "prompt_tokens": usage.input_tokens,
            "completion_tokens": usage.output_tokens,
            "total_tokens": usage.input_tokens + usage.output_tokens,
        }
        return _json({**self._event([]), "usage": counts})

    def _event(self, choices: list[object]) -> dict[str, object]:
        return {
            "id": self.head.get("id", "chatcmpl-guarded"),
            "object": "chat.completion.chunk",
            "created": self.head.get("created", 0),
            "model": self.model,
            "choices": choices,
        }


def _call(delta: inf.ToolCallDelta) -> dict[str, object]:
    call: dict[str, object] = {"index": delta.index, "type": "function"}
    if delta.id is not None:
        call["id"] = delta.id
    function: dict[str, object] = {"arguments": delta.arguments}
    if delta.name is not None:
        function["name"] = delta.name
    call["function"] = function
    return call


def _decoded(event: str) -> object:
    try:
        return json_codec.loads(event)
    except ValueError:
        raise UpstreamError(
            f"the inference backend sent an invalid stream chunk: {clip(event, MAX_MESSAGE)}"
        ) from None


def _json(value: object) -> bytes:
    return json_codec.dumps(value)
