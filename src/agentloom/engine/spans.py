"""The agent loop's spans, in OpenTelemetry's GenAI semantic conventions (with tracing on).

- ``invoke_agent {model}``: a response's whole run (``gen_ai.operation.name = invoke_agent``,
  the response and conversation ids, the usage at the end);
- ``chat {model}``: each model call (``CLIENT``; the served model, the provider, the finish
  reason and token usage), recorded when the call ends (:class:`ModelCall`);
- ``execute_tool {name}``: each server tool call (``gen_ai.tool.name``, its type and call id).

With tracing off, every function returns the events it was given untouched, and nothing is
recorded.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import TYPE_CHECKING, TypeVar

from agentloom.api.response import Response
from agentloom.engine.turn import TurnResult
from agentloom.inference import base as inf
from agentloom.tracing import Attributes, active

if TYPE_CHECKING:
    from opentelemetry.util.types import AttributeValue

__all__ = ["ModelCall", "agent_run", "tool_call", "usage_attributes"]

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


class ModelCall:
    """One model call under way: its ``chat {model}`` span is recorded when it ends (it starts
    no span of its own, so none needs to be current while it streams)."""

    __slots__ = ("model", "provider", "started", "started_ns")

    def __init__(self, model: str, provider: str) -> None:
        """``model``: the served id; ``provider``: the provider's name in the configuration."""
        self.model = model
        self.provider = provider
        self.started = time.perf_counter()
        self.started_ns = time.time_ns()

    def record(self, result: TurnResult, error: Exception | None = None) -> None:
        tracing = active()
        if tracing is None:
            return
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": self.provider,
            "gen_ai.request.model": self.model,
            **usage_attributes(result.usage),
            **_finish(result),
        }
        if error is not None:
            attributes["error.type"] = type(error).__qualname__
        kind = tracing.kind.CLIENT
        tracing.record(f"chat {self.model}", self.started_ns, attributes, kind=kind, failed=error)


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
