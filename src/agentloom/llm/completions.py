"""The Chat Completions path, over agentloom's inference seam (any :class:`Provider`).

Messages become a :class:`ChatRequest`; the provider's chunks become :data:`LLMEvent` s, ending
with the assembled :class:`LLMResponse`. The HTTP work (retries, error mapping, reasoning fields)
is the provider's: :class:`OpenAICompatibleProvider` for a URL, a ``ScriptedModel`` in tests.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field

from agentloom.inference.base import (
    ChatMessage,
    ChatRequest,
    Finish,
    FunctionSpec,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from agentloom.inference.base import Provider as Provider
from agentloom.llm.options import CallOptions
from agentloom.llm.types import (
    FunctionTool,
    LLMCompleted,
    LLMEvent,
    LLMResponse,
    Message,
    MessageToolCall,
    Metrics,
    ReasoningDeltaEvent,
    TextDeltaEvent,
    ToolCallEvent,
)

__all__ = ["chat_request", "stream_completion"]


def _chat_message(message: Message) -> ChatMessage:
    role = "system" if message.role == "developer" else message.role
    calls = tuple(ToolCall(c.call_id, c.name, c.arguments) for c in message.tool_calls)
    return ChatMessage(
        role=role,
        content=message.content,
        tool_calls=calls,
        tool_call_id=message.tool_call_id,
        reasoning=message.reasoning,
    )


def chat_request(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[FunctionTool],
    options: CallOptions,
) -> ChatRequest:
    specs = tuple(
        FunctionSpec(t.name, t.description or None, t.parameters, t.strict) for t in tools
    )
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
    )


@dataclass
class _Assembly:
    started: float
    model: str
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, list[str]] = field(default_factory=dict)  # index -> [id, name, args]
    finish: str | None = None
    usage: Usage = field(default_factory=Usage)
    first_token: float | None = None

    def mark(self) -> None:
        if self.first_token is None:
            self.first_token = time.perf_counter()

    def add_call(self, delta: ToolCallDelta) -> None:
        entry = self.calls.setdefault(delta.index, ["", "", ""])
        entry[0] = delta.id or entry[0]
        entry[1] = delta.name or entry[1]
        entry[2] += delta.arguments

    def tool_calls(self) -> tuple[MessageToolCall, ...]:
        ordered = (self.calls[i] for i in sorted(self.calls))
        return tuple(
            MessageToolCall(call_id or f"call_{n}", name, arguments or "{}")
            for n, (call_id, name, arguments) in enumerate(ordered)
        )

    def response(self) -> LLMResponse:
        now = time.perf_counter()
        ttft = None if self.first_token is None else (self.first_token - self.started) * 1000
        metrics = Metrics(
            path="completions",
            model=self.model,
            latency_ms=(now - self.started) * 1000,
            input_tokens=self.usage.input_tokens,
            output_tokens=self.usage.output_tokens,
            cached_tokens=self.usage.cached_tokens,
            reasoning_tokens=self.usage.reasoning_tokens,
            time_to_first_token_ms=ttft,
        )
        message = Message(
            "assistant",
            "".join(self.text) or None,
            tool_calls=self.tool_calls(),
            reasoning="".join(self.reasoning) or None,
        )
        return LLMResponse(message, metrics, self.finish)


async def stream_completion(
    provider: Provider, request: ChatRequest
) -> AsyncGenerator[LLMEvent, None]:
    """Stream one chat completion as SDK events; raises the provider's ``UpstreamError`` s."""
    state = _Assembly(time.perf_counter(), request.model)
    chunks = provider.stream(request)
    try:
        async for chunk in chunks:
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
                state.add_call(chunk)
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
