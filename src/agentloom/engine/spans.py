"""The agent loop's spans, in OpenTelemetry's GenAI semantic conventions (with tracing on).

- ``invoke_agent {model}``: a response's whole run (``gen_ai.operation.name = invoke_agent``,
  the response and conversation ids, the usage at the end);
- ``chat {model}``: each model call (``CLIENT``; the served model, the provider, the backend's
  model, finish reason and token usage);
- ``execute_tool {name}``: each server tool call (``gen_ai.tool.name``, its type and call id).

Every function returns the events it was given untouched when tracing is off.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import TypeVar

from agentloom.api.response import Response
from agentloom.engine.turn import TurnResult
from agentloom.inference import base as inf
from agentloom.tracing import Attributes, active

__all__ = ["agent_run", "model_call", "tool_call"]

T = TypeVar("T")


def agent_run(
    events: AsyncGenerator[T, None], response: Callable[[], Response]
) -> AsyncGenerator[T, None]:
    tracing = active()
    if tracing is None:
        return events
    first = response()
    attributes: dict[str, str] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "agentloom",
        "gen_ai.request.model": first.model,
        "gen_ai.response.id": first.id,
    }
    if first.conversation is not None:
        attributes["gen_ai.conversation.id"] = first.conversation.id
    name = f"invoke_agent {first.model}"
    return tracing.steps(events, name, attributes, ended=lambda: _ended(response()))


def model_call(
    events: AsyncIterator[T], model: str, provider: str, result: TurnResult
) -> AsyncIterator[T]:
    """``model``: the served id; ``provider``: the provider's name in the configuration."""
    tracing = active()
    if tracing is None:
        return events
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": model,
    }
    return tracing.steps(
        events,
        f"chat {model}",
        attributes,
        kind=tracing.kind.CLIENT,
        ended=lambda: {**usage_attributes(result.usage), **_finish(result)},
    )


def tool_call(events: AsyncIterator[T], name: str, kind: str, call_id: str) -> AsyncIterator[T]:
    tracing = active()
    if tracing is None:
        return events
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.type": kind,
        "gen_ai.tool.call.id": call_id,
    }
    return tracing.steps(events, f"execute_tool {name}", attributes)


def usage_attributes(usage: inf.Usage | None) -> Attributes:
    if usage is None:
        return {}
    attributes: dict[str, int] = {
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
    }
    if usage.cached_tokens:
        attributes["gen_ai.usage.cache_read.input_tokens"] = usage.cached_tokens
    if usage.reasoning_tokens:
        attributes["gen_ai.usage.reasoning.output_tokens"] = usage.reasoning_tokens
    return attributes


def _finish(result: TurnResult) -> Attributes:
    if result.finish is None:
        return {}
    return {"gen_ai.response.finish_reasons": [result.finish]}


def _ended(response: Response) -> Attributes:
    attributes: dict[str, str | int] = {"agentloom.response.status": response.status}
    usage = response.usage
    if usage is not None:
        attributes["gen_ai.usage.input_tokens"] = usage.input_tokens
        attributes["gen_ai.usage.output_tokens"] = usage.output_tokens
    if response.error is not None:
        attributes["error.type"] = response.error.code
    return attributes
