"""The LLM adapter: one object, two wire paths, the same typed answer.

```python
llm = LLM("gpt-5", base_url="http://127.0.0.1:8321/v1", api_key="...")
reply = await llm.chat([Message.user("Hi")])       # routed: gpt-5* -> Responses
reply = await llm.completion([Message.user("Hi")])  # forced: Chat Completions
```

``chat``/``stream`` route by model capability (:func:`choose_path`); ``completion``/``responses``
and their ``stream_*`` variants force a path. Non-streaming calls are the collected stream.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from agentloom.bus import EventBus, default_bus
from agentloom.inference.base import Provider, ProviderConfig
from agentloom.llm.completions import chat_request, stream_completion
from agentloom.llm.options import CallOptions
from agentloom.llm.routing import CAPABILITIES, choose_path
from agentloom.llm.state import ConversationState, LLMStateError, StateMode
from agentloom.llm.telemetry import observed
from agentloom.llm.types import FunctionTool, LLMCompleted, LLMEvent, LLMResponse, Message, Path

if TYPE_CHECKING:
    import openai
    from opentelemetry.trace import Tracer

__all__ = ["LLM"]


class LLM:
    """A model behind an OpenAI-compatible endpoint (or an in-process :class:`Provider`).

    ``path`` forces Chat Completions or Responses for this LLM; otherwise ``capabilities``
    decides. ``state_mode`` applies to the Responses path: ``stateless`` replays the whole
    history with ``store: false``; ``stateful`` sends only new messages with
    ``previous_response_id`` (kept in the ``state`` passed to each call).

    Every call emits an :class:`LLMCall` on ``bus``; with ``tracer=`` (an OpenTelemetry
    ``Tracer``) or ``telemetry="otel"`` (the global tracer provider) it is also a span in the
    GenAI semantic conventions (:mod:`agentloom.llm.otel`, the ``otel`` extra).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        path: Path | None = None,
        state_mode: StateMode = "stateless",
        encrypted_reasoning: bool = False,
        provider: Provider | None = None,
        http_client: Any = None,
        capabilities: Mapping[str, Path] = CAPABILITIES,
        bus: EventBus | None = None,
        options: CallOptions | None = None,
        timeout: float = 600.0,
        max_retries: int = 2,
        tracer: Tracer | None = None,
        telemetry: Literal["bus", "otel"] = "bus",
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.state_mode: StateMode = state_mode
        self.encrypted_reasoning = encrypted_reasoning
        self.options = options or CallOptions()
        self.bus = bus or default_bus()
        self.timeout = timeout
        self.max_retries = max_retries
        self._override = path
        self._capabilities = capabilities
        self._provider = provider
        self._own_provider = provider is None
        self._http_client = http_client
        self._responses_client: openai.AsyncOpenAI | None = None
        self._tracer = tracer if tracer is not None or telemetry == "bus" else _global_tracer()

    @property
    def path(self) -> Path:
        """The path ``chat``/``stream`` use for this model."""
        if self._provider is not None and not self._own_provider and self._override is None:
            return "completions"  # an in-process provider only speaks chat
        return choose_path(self.model, self._override, self._capabilities)

    # --- routed ------------------------------------------------------------------------------

    async def chat(
        self,
        messages: Sequence[Message],
        tools: Sequence[FunctionTool] = (),
        *,
        state: ConversationState | None = None,
        options: CallOptions | None = None,
    ) -> LLMResponse:
        return await _collect(self.stream(messages, tools, state=state, options=options))

    def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[FunctionTool] = (),
        *,
        state: ConversationState | None = None,
        options: CallOptions | None = None,
    ) -> AsyncGenerator[LLMEvent, None]:
        if self.path == "responses":
            return self.stream_responses(messages, tools, state=state, options=options)
        return self.stream_completion(messages, tools, state=state, options=options)

    # --- forced paths ------------------------------------------------------------------------

    async def completion(
        self,
        messages: Sequence[Message],
        tools: Sequence[FunctionTool] = (),
        *,
        state: ConversationState | None = None,
        options: CallOptions | None = None,
    ) -> LLMResponse:
        return await _collect(self.stream_completion(messages, tools, state=state, options=options))

    async def responses(
        self,
        messages: Sequence[Message],
        tools: Sequence[FunctionTool] = (),
        *,
        state: ConversationState | None = None,
        options: CallOptions | None = None,
    ) -> LLMResponse:
        return await _collect(self.stream_responses(messages, tools, state=state, options=options))

    def stream_completion(
        self,
        messages: Sequence[Message],
        tools: Sequence[FunctionTool] = (),
        *,
        state: ConversationState | None = None,
        options: CallOptions | None = None,
    ) -> AsyncGenerator[LLMEvent, None]:
        if state is not None and state.stateful:
            raise LLMStateError(
                f"this conversation's history lives on the server (previous_response_id "
                f"{state.previous_response_id}), but model {self.model!r} uses Chat Completions, "
                "which cannot continue it; start a new conversation state or use stateless mode"
            )
        request_options = self._options(options)
        request = chat_request(self.model, messages, tools, request_options)
        events = stream_completion(self._chat_provider(), request)
        return self._observed(events, "completions", request_options)

    def stream_responses(
        self,
        messages: Sequence[Message],
        tools: Sequence[FunctionTool] = (),
        *,
        state: ConversationState | None = None,
        options: CallOptions | None = None,
    ) -> AsyncGenerator[LLMEvent, None]:
        from agentloom.llm.responses import ResponsesCall, stream_responses

        if self._provider is not None and not self._own_provider:
            raise LLMStateError(
                f"model {self.model!r} is an in-process provider, which only speaks Chat "
                "Completions; give the LLM a base_url to use the Responses API"
            )
        call = ResponsesCall(
            model=self.model,
            messages=tuple(messages),
            tools=tuple(tools),
            options=self._options(options),
            state=state,
            mode=self.state_mode,
            encrypted_reasoning=self.encrypted_reasoning,
        )
        events = stream_responses(self._openai_client(), call)
        return self._observed(events, "responses", call.options)

    # --- plumbing ----------------------------------------------------------------------------

    def with_model(self, model: str, *, path: Path | None = None) -> LLM:
        """The same endpoint and settings, another model (and optionally a forced path)."""
        other = LLM.__new__(LLM)
        other.__dict__.update(self.__dict__)
        other.model = model
        other._override = path
        return other

    def _options(self, options: CallOptions | None) -> CallOptions:
        if options is None:
            return self.options
        defaults = self.options
        changed = {
            name: getattr(options, name)
            for name in CallOptions.__dataclass_fields__
            if getattr(options, name) != getattr(CallOptions(), name)
        }
        return replace(defaults, **changed)

    def _observed(
        self, events: AsyncGenerator[LLMEvent, None], path: Path, options: CallOptions
    ) -> AsyncGenerator[LLMEvent, None]:
        """``events`` reported on the bus, and in a span when a tracer is set."""
        events = observed(events, path=path, model=self.model, bus=self.bus)
        if self._tracer is None:
            return events
        from agentloom.llm.otel import SpanRequest, traced

        span = SpanRequest(self.model, path, options, base_url=self._span_url(path))
        return traced(events, self._tracer, span)

    def _span_url(self, path: Path) -> str | None:
        if path == "completions" and self._provider is not None and not self._own_provider:
            return None  # an in-process provider: no server
        return self.base_url

    def _chat_provider(self) -> Provider:
        if self._provider is None:
            from agentloom.inference.openai_compatible import OpenAICompatibleProvider

            config = ProviderConfig(
                name="llm",
                base_url=self.base_url or "https://api.openai.com/v1",
                api_key=self.api_key,
                timeout=self.timeout,
                max_retries=self.max_retries,
                discover=False,
            )
            self._provider = OpenAICompatibleProvider(config)
        return self._provider

    def _openai_client(self) -> openai.AsyncOpenAI:
        if self._responses_client is None:
            import openai

            self._responses_client = openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self.api_key or "not-needed",
                timeout=self.timeout,
                max_retries=self.max_retries,
                http_client=self._http_client,
            )
        return self._responses_client

    async def aclose(self) -> None:
        if self._own_provider and self._provider is not None:
            await self._provider.aclose()
            self._provider = None
        if self._responses_client is not None:
            await self._responses_client.close()
            self._responses_client = None

    async def __aenter__(self) -> LLM:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _global_tracer() -> Tracer:
    from agentloom.llm.otel import default_tracer

    return default_tracer()


async def _collect(events: AsyncGenerator[LLMEvent, None]) -> LLMResponse:
    async with aclosing(events) as stream:
        async for event in stream:
            if isinstance(event, LLMCompleted):
                return event.response
    raise RuntimeError("the model stream ended without a completed event")
