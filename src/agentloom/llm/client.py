"""The LLM adapter: one object, two wire paths, the same typed answer.

```python
llm = LLM("gpt-5", base_url="http://127.0.0.1:8321/v1", api_key="...")
reply = await llm.chat([Message.user("Hi")])         # routed: gpt-5* -> Responses
reply = await llm.acompletion([Message.user("Hi")])  # forced: Chat Completions
reply = llm.responses([Message.user("Hi")])          # forced: Responses, synchronous
```

``chat``/``stream`` route by model capability (:func:`choose_path`); ``acompletion``/
``aresponses`` and their ``stream_*`` variants force a path, and ``completion``/``responses`` are
the same calls, synchronous (:mod:`agentloom.llm.sync`). Non-streaming calls are the collected
stream.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from agentloom.bus import EventBus, default_bus
from agentloom.inference.base import Provider, ProviderConfig
from agentloom.json_types import JSONValue
from agentloom.llm.completions import chat_request, stream_completion, strict_schemas
from agentloom.llm.condense import Condenser, condensing
from agentloom.llm.options import CallOptions, merge_options
from agentloom.llm.routing import CAPABILITIES, choose_path, is_reasoning_model
from agentloom.llm.state import ConversationState, LLMStateError, StateMode
from agentloom.llm.sync import SyncRunner
from agentloom.llm.telemetry import observed
from agentloom.llm.types import FunctionTool, LLMCompleted, LLMEvent, LLMResponse, Message, Path

if TYPE_CHECKING:
    import openai
    from opentelemetry.trace import Tracer

__all__ = ["LLM"]

log = logging.getLogger(__name__)


@dataclass
class _Clients:
    """The HTTP clients an LLM made on one event loop (they cannot move to another)."""

    provider: Provider | None = None
    responses: openai.AsyncOpenAI | None = None

    async def aclose(self) -> None:
        provider, responses = self.provider, self.responses
        self.provider = self.responses = None
        if provider is not None:
            await provider.aclose()
        if responses is not None:
            await responses.close()


class LLM:
    """A model behind an OpenAI-compatible endpoint (or an in-process :class:`Provider`).

    ``path`` forces Chat Completions or Responses for this LLM; otherwise ``capabilities``
    decides. ``state_mode`` applies to the Responses path: ``stateless`` replays the whole
    history with ``store: false``; ``stateful`` sends only new messages with
    ``previous_response_id`` (kept in the ``state`` passed to each call).

    Every call emits an :class:`LLMCall` on ``bus``; with ``tracer=`` (an OpenTelemetry
    ``Tracer``) or ``telemetry="otel"`` (the global tracer provider) it is also a span in the
    GenAI semantic conventions (:mod:`agentloom.llm.otel`, the ``otel`` extra).

    ``metadata`` and ``extra_body`` go with every call, merged with each call's own
    (:mod:`agentloom.llm.options`). ``reasoning_model`` marks the model as a reasoning model
    (``None``: by name, :data:`REASONING_MODELS`): its calls drop ``temperature`` and ``top_p``.
    ``condenser`` summarises the oldest turns of a call that overflows the context window and
    retries it once (:mod:`agentloom.llm.condense`). ``sync_deadline`` bounds a synchronous
    call (default: ``timeout`` for each try, three times over with a condenser).
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
        metadata: Mapping[str, str] | None = None,
        extra_body: Mapping[str, JSONValue] | None = None,
        reasoning_model: bool | None = None,
        condenser: Condenser | None = None,
        sync_deadline: float | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.state_mode: StateMode = state_mode
        self.encrypted_reasoning = encrypted_reasoning
        given = options or CallOptions()
        self.options = merge_options(given, CallOptions(metadata=metadata, extra_body=extra_body))
        self.bus = bus or default_bus()
        self.timeout = timeout
        self.max_retries = max_retries
        self.reasoning_model = reasoning_model
        self.condenser = condenser
        self.sync_deadline = sync_deadline
        self._override = path
        self._capabilities = capabilities
        self._provider = provider  # an in-process provider, given (never closed here)
        self._http_client = http_client
        self._clients = _Clients()  # made on the caller's loop
        self._sync = SyncRunner(model)
        self._sync_clients = _Clients()  # made on the sync runner's loop
        self._tracer = tracer if tracer is not None or telemetry == "bus" else _global_tracer()

    @property
    def path(self) -> Path:
        """The path ``chat``/``stream`` use for this model."""
        if self._provider is not None and self._override is None:
            return "completions"  # an in-process provider only speaks chat
        return choose_path(self.model, self._override, self._capabilities)

    @property
    def is_reasoning_model(self) -> bool:
        """Whether calls drop ``temperature``/``top_p`` (marked so, or named like one)."""
        if self.reasoning_model is not None:
            return self.reasoning_model
        return is_reasoning_model(self.model)

    # --- routed ------------------------------------------------------------------------------

    async def chat(
        self,
        messages: Sequence[Message],
        tools: Sequence[FunctionTool] = (),
        *,
        state: ConversationState | None = None,
        options: CallOptions | None = None,
        metadata: Mapping[str, str] | None = None,
        extra_body: Mapping[str, JSONValue] | None = None,
    ) -> LLMResponse:
        options = _with_extras(options, metadata, extra_body)
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

    async def acompletion(
        self,
        messages: Sequence[Message],
        tools: Sequence[FunctionTool] = (),
        *,
        state: ConversationState | None = None,
        options: CallOptions | None = None,
        metadata: Mapping[str, str] | None = None,
        extra_body: Mapping[str, JSONValue] | None = None,
    ) -> LLMResponse:
        """One Chat Completions call, collected."""
        options = _with_extras(options, metadata, extra_body)
        return await _collect(self.stream_completion(messages, tools, state=state, options=options))

    async def aresponses(
        self,
        messages: Sequence[Message],
        tools: Sequence[FunctionTool] = (),
        *,
        state: ConversationState | None = None,
        options: CallOptions | None = None,
        metadata: Mapping[str, str] | None = None,
        extra_body: Mapping[str, JSONValue] | None = None,
    ) -> LLMResponse:
        """One Responses call, collected."""
        options = _with_extras(options, metadata, extra_body)
        return await _collect(self.stream_responses(messages, tools, state=state, options=options))

    def completion(
        self,
        messages: Sequence[Message],
        tools: Sequence[FunctionTool] = (),
        *,
        state: ConversationState | None = None,
        options: CallOptions | None = None,
        metadata: Mapping[str, str] | None = None,
        extra_body: Mapping[str, JSONValue] | None = None,
    ) -> LLMResponse:
        """:meth:`acompletion`, synchronous: callable with or without a running event loop."""
        options = _with_extras(options, metadata, extra_body)
        return self._sync.run(
            lambda: self.acompletion(messages, tools, state=state, options=options),
            self._sync_deadline(),
        )

    def responses(
        self,
        messages: Sequence[Message],
        tools: Sequence[FunctionTool] = (),
        *,
        state: ConversationState | None = None,
        options: CallOptions | None = None,
        metadata: Mapping[str, str] | None = None,
        extra_body: Mapping[str, JSONValue] | None = None,
    ) -> LLMResponse:
        """:meth:`aresponses`, synchronous: callable with or without a running event loop."""
        options = _with_extras(options, metadata, extra_body)
        return self._sync.run(
            lambda: self.aresponses(messages, tools, state=state, options=options),
            self._sync_deadline(),
        )

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
        tools = tuple(tools)
        chat_request(self.model, messages, tools, request_options)  # bad input fails here

        def run(history: Sequence[Message]) -> AsyncGenerator[LLMEvent, None]:
            request = chat_request(self.model, history, tools, request_options)
            events = stream_completion(self._chat_provider(), request, strict_schemas(tools))
            return self._observed(events, "completions", request_options)

        return self._condensed(run, messages, "completions", request_options)

    def stream_responses(
        self,
        messages: Sequence[Message],
        tools: Sequence[FunctionTool] = (),
        *,
        state: ConversationState | None = None,
        options: CallOptions | None = None,
    ) -> AsyncGenerator[LLMEvent, None]:
        from agentloom.llm.responses import ResponsesCall, stream_responses
        from agentloom.llm.responses_request import request_params

        if self._provider is not None:
            raise LLMStateError(
                f"model {self.model!r} is an in-process provider, which only speaks Chat "
                "Completions; give the LLM a base_url to use the Responses API"
            )
        request_options = self._options(options)

        def call(history: Sequence[Message]) -> ResponsesCall:
            return ResponsesCall(
                model=self.model,
                messages=tuple(history),
                tools=tuple(tools),
                options=request_options,
                state=state,
                mode=self.state_mode,
                encrypted_reasoning=self.encrypted_reasoning,
            )

        request_params(call(messages))  # bad input fails here, before anything is sent

        def run(history: Sequence[Message]) -> AsyncGenerator[LLMEvent, None]:
            events = stream_responses(self._openai_client(), call(history))
            return self._observed(events, "responses", request_options)

        return self._condensed(run, messages, "responses", request_options, state)

    # --- plumbing ----------------------------------------------------------------------------

    def with_model(self, model: str, *, path: Path | None = None) -> LLM:
        """The same endpoint and settings, another model (and optionally a forced path); it is
        a reasoning model by its name (set ``reasoning_model`` on it to say otherwise)."""
        other = LLM.__new__(LLM)
        other.__dict__.update(self.__dict__)
        other.model = model
        other._override = path
        other.reasoning_model = None
        return other

    def _options(self, options: CallOptions | None) -> CallOptions:
        merged = merge_options(self.options, options)
        if self.is_reasoning_model and (merged.temperature, merged.top_p) != (None, None):
            log.debug(
                "temperature/top_p dropped: %s is a reasoning model, which fixes its own sampling",
                self.model,
            )
            merged = replace(merged, temperature=None, top_p=None)
        return merged

    def _sync_deadline(self) -> float:
        if self.sync_deadline is not None:
            return self.sync_deadline
        each = self.timeout * (self.max_retries + 1)
        return each * 3 if self.condenser is not None else each

    def _condensed(
        self,
        run: Callable[[Sequence[Message]], AsyncGenerator[LLMEvent, None]],
        messages: Sequence[Message],
        path: Path,
        options: CallOptions,
        state: ConversationState | None = None,
    ) -> AsyncGenerator[LLMEvent, None]:
        """``run(messages)``, through the condenser when the LLM has one."""
        condenser = self.condenser
        if condenser is None:
            return run(messages)

        def retry(history: Sequence[Message]) -> AsyncGenerator[LLMEvent, None]:
            if history is not messages and state is not None:
                state.reset()  # the condensed history replaces what the server held
            return run(history)

        async def summarise(prompt: Sequence[Message]) -> str:
            summary_options = replace(  # plain text, whatever the call itself asks for
                options,
                max_output_tokens=condenser.max_summary_tokens,
                tool_choice=None,
                response_format="text",
            )
            reply = await _collect(self._summary_call(prompt, path, summary_options))
            return reply.text

        return condensing(retry, messages, condenser, summarise)

    def _summary_call(
        self, prompt: Sequence[Message], path: Path, options: CallOptions
    ) -> AsyncGenerator[LLMEvent, None]:
        """The condenser's summary call: the same model and path, no tools, no state."""
        if path == "responses":
            from agentloom.llm.responses import ResponsesCall, stream_responses

            call = ResponsesCall(self.model, tuple(prompt), (), options, None, "stateless", False)
            return self._observed(stream_responses(self._openai_client(), call), path, options)
        request = chat_request(self.model, prompt, (), options)
        return self._observed(stream_completion(self._chat_provider(), request), path, options)

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
        if path == "completions" and self._provider is not None:
            return None  # an in-process provider: no server
        return self.base_url

    def _here(self) -> _Clients:
        """The clients of the loop this runs on: the sync runner's, or the caller's."""
        return self._sync_clients if self._sync.owns_running_loop() else self._clients

    def _chat_provider(self) -> Provider:
        if self._provider is not None:
            return self._provider
        clients = self._here()
        if clients.provider is None:
            from agentloom.inference.openai_compatible import OpenAICompatibleProvider

            config = ProviderConfig(
                name="llm",
                base_url=self.base_url or "https://api.openai.com/v1",
                api_key=self.api_key,
                timeout=self.timeout,
                max_retries=self.max_retries,
                discover=False,
            )
            clients.provider = OpenAICompatibleProvider(config)
        return clients.provider

    def _openai_client(self) -> openai.AsyncOpenAI:
        clients = self._here()
        if clients.responses is None:
            import openai

            on_sync_loop = clients is self._sync_clients
            clients.responses = openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self.api_key or "not-needed",
                timeout=self.timeout,
                max_retries=self.max_retries,
                # a given client belongs to the caller's loop: the sync loop makes its own
                http_client=None if on_sync_loop else self._http_client,
            )
        return clients.responses

    async def aclose(self) -> None:
        """Close the clients (the sync runner's too, and its thread)."""
        await self._clients.aclose()
        if self._sync.started:
            await asyncio.to_thread(self._close_sync)

    def close(self) -> None:
        """Close what the synchronous calls opened: their clients, loop and thread (call
        :meth:`aclose` from async code to close the async calls' clients as well)."""
        self._close_sync()

    def _close_sync(self) -> None:
        self._sync.close(self._sync_clients.aclose)

    async def __aenter__(self) -> LLM:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __enter__(self) -> LLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _global_tracer() -> Tracer:
    from agentloom.llm.otel import default_tracer

    return default_tracer()


def _with_extras(
    options: CallOptions | None,
    metadata: Mapping[str, str] | None,
    extra_body: Mapping[str, JSONValue] | None,
) -> CallOptions | None:
    """``options`` with a call's ``metadata`` and ``extra_body`` keyword arguments merged in."""
    if metadata is None and extra_body is None:
        return options
    extras = CallOptions(metadata=metadata, extra_body=extra_body)
    return merge_options(options or CallOptions(), extras)


async def _collect(events: AsyncGenerator[LLMEvent, None]) -> LLMResponse:
    async with aclosing(events) as stream:
        async for event in stream:
            if isinstance(event, LLMCompleted):
                return event.response
    raise RuntimeError("the model stream ended without a completed event")
