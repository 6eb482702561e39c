"""The Chat Completions path, over agentloom's inference seam (any :class:`Provider`).

Messages become a :class:`ChatRequest`; the provider's chunks become :data:`LLMEvent` s, ending
with the assembled :class:`LLMResponse` (its ``raw_response`` the chunks, in order). The HTTP work
(retries, error mapping, reasoning fields) is the provider's: :class:`OpenAICompatibleProvider`
for a URL, a ``ScriptedModel`` in tests.

A tool is sent as it is unless it asks to be strict (``FunctionTool(strict=True)``: its schema
made strict-compatible). ``reasoning_summary`` has no Chat Completions field and is dropped.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field

from agentloom.inference.base import (
    ChatMessage,
    ChatRequest,
    Chunk,
    ContentPart,
    Finish,
    FunctionSpec,
    ImagePart,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from agentloom.inference.base import Provider as Provider
from agentloom.json_types import JSONObject
from agentloom.llm.estimate import estimated_usage
from agentloom.llm.options import CallOptions, body_extras
from agentloom.llm.strict_schema import drop_added_nulls, sent_strict
from agentloom.llm.types import (
    Content,
    FunctionTool,
    LLMCompleted,
    LLMEvent,
    LLMResponse,
    Message,
    MessageToolCall,
    Metrics,
    ReasoningDeltaEvent,
    TextContent,
    TextDeltaEvent,
    ToolCallEvent,
)

__all__ = ["chat_request", "stream_completion", "strict_schemas"]

log = logging.getLogger(__name__)


def _chat_message(message: Message) -> ChatMessage:
    role = "system" if message.role == "developer" else message.role
    calls = tuple(ToolCall(c.call_id, c.name, c.arguments) for c in message.tool_calls)
    return ChatMessage(
        role=role,
        content=_chat_content(message),
        tool_calls=calls,
        tool_call_id=message.tool_call_id,
        reasoning=message.reasoning,
    )


def _chat_content(message: Message) -> str | tuple[ContentPart, ...] | None:
    if message.content is None or isinstance(message.content, str):
        return message.content
    if message.role != "user":
        return message.text  # only a user message takes parts everywhere; the rest is text
    return tuple(_chat_part(part) for part in message.content)


def _chat_part(part: Content) -> ContentPart:
    if isinstance(part, TextContent):
        return TextPart(part.text)
    return ImagePart(part.url, part.detail)


def _spec(tool: FunctionTool) -> FunctionSpec:
    strict = sent_strict(tool, default=False)  # as it is, unless the tool asks to be strict
    if strict is not None:
        return FunctionSpec(tool.name, tool.description or None, strict, True)
    return FunctionSpec(tool.name, tool.description or None, tool.parameters, False)


def chat_request(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[FunctionTool],
    options: CallOptions,
) -> ChatRequest:
    specs = tuple(_spec(t) for t in tools)
    metadata, extra_body = body_extras(options)
    if options.reasoning_summary is not None:
        log.debug("reasoning_summary dropped: Chat Completions has no such field (%s)", model)
    return ChatRequest(
        model=model,
        messages=tuple(_chat_message(m) for m in messages),
        tools=specs,
        tool_choice=options.tool_choice if specs else None,
        parallel_tool_calls=options.parallel_tool_calls if specs else None,
        temperature=options.temperature,
        top_p=options.top_p,
        max_tokens=options.max_output_tokens,
        reasoning_effort=options.reasoning_effort,
        response_format=options.response_format,
        metadata=metadata,
        extra_body=extra_body or None,
    )


@dataclass
class _Assembly:
    started: float
    request: ChatRequest
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, list[ToolCallDelta]] = field(default_factory=dict)  # by index
    finish: str | None = None
    usage: Usage | None = None
    chunks: list[Chunk] = field(default_factory=list)
    strict: Mapping[str, JSONObject] = field(default_factory=dict)  # own schemas, by name
    first_token: float | None = None

    def mark(self) -> None:
        if self.first_token is None:
            self.first_token = time.perf_counter()

    def tool_calls(self) -> tuple[MessageToolCall, ...]:
        return tuple(
            _tool_call(n, tuple(self.calls[index]), self.strict)
            for n, index in enumerate(sorted(self.calls))
        )

    def response(self) -> LLMResponse:
        message = Message(
            "assistant",
            "".join(self.text) or None,
            tool_calls=self.tool_calls(),
            reasoning="".join(self.reasoning) or None,
        )
        return LLMResponse(
            message, self._metrics(message), self.finish, raw_response=tuple(self.chunks)
        )

    def _metrics(self, message: Message) -> Metrics:
        now = time.perf_counter()
        ttft = None if self.first_token is None else (self.first_token - self.started) * 1000
        usage = self.usage or estimated_usage(self.request, message)
        return Metrics(
            path="completions",
            model=self.request.model,
            latency_ms=(now - self.started) * 1000,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cached_tokens=usage.cached_tokens,
            reasoning_tokens=usage.reasoning_tokens,
            time_to_first_token_ms=ttft,
            tokens_estimated=self.usage is None,
        )


def _tool_call(
    n: int, deltas: tuple[ToolCallDelta, ...], strict: Mapping[str, JSONObject]
) -> MessageToolCall:
    call_id = next((d.id for d in deltas if d.id), None) or f"call_{n}"
    name = next((d.name for d in reversed(deltas) if d.name), "")
    arguments = "".join(d.arguments for d in deltas) or "{}"
    if name in strict:
        arguments = drop_added_nulls(arguments, strict[name])
    return MessageToolCall(call_id, name, arguments, origin="completion", raw=deltas)


def strict_schemas(tools: Sequence[FunctionTool]) -> dict[str, JSONObject]:
    """The own schemas of the tools sent strict on this path (those that ask to be)."""
    return {tool.name: tool.parameters for tool in tools if tool.strict}


async def stream_completion(
    provider: Provider, request: ChatRequest, strict: Mapping[str, JSONObject] | None = None
) -> AsyncGenerator[LLMEvent, None]:
    """Stream one chat completion as SDK events; raises the provider's ``UpstreamError`` s.
    ``strict``: the own schemas of the tools sent strict (:func:`strict_schemas`)."""
    state = _Assembly(time.perf_counter(), request, strict=strict or {})
    chunks = provider.stream(request)
    try:
        async for chunk in chunks:
            state.chunks.append(chunk)
            if isinstance(chunk, TextDelta | RefusalDelta):
                state.mark()
                state.text.append(chunk.text)
                yield TextDeltaEvent(chunk.text)
            elif isinstance(chunk, ReasoningDelta):
                state.mark()
                state.reasoning.append(chunk.text)
                yield ReasoningDeltaEvent(chunk.text)
            elif isinstance(chunk, ToolCallDelta):
                state.mark()
                state.calls.setdefault(chunk.index, []).append(chunk)
            elif isinstance(chunk, Finish):
                state.finish = chunk.reason
            elif isinstance(chunk, Usage):
                state.usage = chunk
    finally:
        if isinstance(chunks, AsyncGenerator):
            await chunks.aclose()
    response = state.response()
    for call in response.tool_calls:
        yield ToolCallEvent(call)
    yield LLMCompleted(response)
