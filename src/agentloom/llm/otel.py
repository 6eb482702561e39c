"""OpenTelemetry spans for model calls, in the GenAI semantic conventions.

One ``CLIENT`` span per call, named ``chat {model}``, from the request until the stream ends:
``gen_ai.operation.name``, ``gen_ai.provider.name``, ``gen_ai.request.*`` (model and the options
that were set), ``gen_ai.response.{model,id,finish_reasons}``, ``gen_ai.usage.*`` tokens,
``server.address``/``server.port``, ``error.type`` and an error status when the call fails, and
``agentloom.llm.path`` (``completions`` or ``responses``). Messages are never recorded.

Needs the ``otel`` extra (``pip install 'agentloom-server[otel]'``, i.e. ``opentelemetry-api``); an
:class:`~agentloom.llm.LLM` gets spans with ``tracer=`` (any OTel ``Tracer``) or
``telemetry="otel"`` (a tracer from the global tracer provider).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from urllib.parse import urlsplit

from agentloom import __version__
from agentloom.frozen import frozen
from agentloom.llm.options import CallOptions
from agentloom.llm.types import LLMCompleted, LLMEvent, LLMResponse, Path

try:
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer
    from opentelemetry.util.types import AttributeValue
except ImportError as exc:  # pragma: no cover - the extra is installed for the tests
    raise ImportError(
        "OpenTelemetry spans need the 'otel' extra: pip install 'agentloom-server[otel]'"
    ) from exc

__all__ = ["SpanRequest", "default_tracer", "traced"]

INSTRUMENTATION = "agentloom.llm"


@frozen
class SpanRequest:
    """What a span says about the request."""

    model: str
    path: Path
    options: CallOptions
    base_url: str | None = None
    provider: str = "openai"  # the API spoken: OpenAI's, whatever serves it

    def attributes(self) -> dict[str, AttributeValue]:
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": self.provider,
            "gen_ai.request.model": self.model,
            "gen_ai.request.stream": True,
            "agentloom.llm.path": self.path,
        }
        options = self.options
        _put(attributes, "gen_ai.request.temperature", options.temperature)
        _put(attributes, "gen_ai.request.top_p", options.top_p)
        _put(attributes, "gen_ai.request.max_tokens", options.max_output_tokens)
        attributes.update(_server(self.base_url))
        return attributes


def default_tracer() -> Tracer:
    """A tracer from the global tracer provider (whatever the application configured)."""
    return trace.get_tracer(INSTRUMENTATION, __version__)


def response_attributes(response: LLMResponse) -> dict[str, AttributeValue]:
    metrics = response.metrics
    attributes: dict[str, AttributeValue] = {
        "gen_ai.usage.input_tokens": metrics.input_tokens,
        "gen_ai.usage.output_tokens": metrics.output_tokens,
        "gen_ai.usage.cache_read.input_tokens": metrics.cached_tokens,
        "gen_ai.usage.reasoning.output_tokens": metrics.reasoning_tokens,
    }
    _put(attributes, "gen_ai.response.model", response.model)
    _put(attributes, "gen_ai.response.id", response.response_id)
    if response.finish_reason is not None:
        attributes["gen_ai.response.finish_reasons"] = (response.finish_reason,)
    if metrics.time_to_first_token_ms is not None:
        first = metrics.time_to_first_token_ms / 1000
        attributes["gen_ai.response.time_to_first_chunk"] = first
    return attributes


async def traced(
    events: AsyncGenerator[LLMEvent, None], tracer: Tracer, request: SpanRequest
) -> AsyncGenerator[LLMEvent, None]:
    """Pass ``events`` through inside one span (ended when the stream ends, however it ends)."""
    span = tracer.start_span(
        f"chat {request.model}", kind=SpanKind.CLIENT, attributes=request.attributes()
    )
    try:
        async with aclosing(events) as stream:
            async for event in stream:
                if isinstance(event, LLMCompleted):
                    span.set_attributes(response_attributes(event.response))
                yield event
    except GeneratorExit:  # the caller stopped reading: not an error of the call
        raise
    except BaseException as exc:
        span.set_attribute("error.type", type(exc).__qualname__)
        span.set_status(Status(StatusCode.ERROR, str(exc)[:500]))
        raise
    finally:
        span.end()


def _put(attributes: dict[str, AttributeValue], key: str, value: AttributeValue | None) -> None:
    if value is not None:
        attributes[key] = value


def _server(base_url: str | None) -> dict[str, AttributeValue]:
    if base_url is None:
        return {}
    parts = urlsplit(base_url)
    if parts.hostname is None:
        return {}
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return {"server.address": parts.hostname, "server.port": port}
