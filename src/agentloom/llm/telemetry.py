"""Telemetry for model calls: a typed event on the bus for every call, success or failure.

OpenTelemetry spans (GenAI semantic conventions) are added by :mod:`agentloom.llm.otel` when the
``opentelemetry-api`` package is installed and a tracer is configured.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Literal

from agentloom.bus import EventBus
from agentloom.errors import (
    ContextLengthExceededError,
    UpstreamError,
    UpstreamRateLimitError,
    UpstreamRequestError,
    UpstreamTimeoutError,
)
from agentloom.frozen import frozen
from agentloom.llm.types import LLMCompleted, LLMEvent, Metrics, Path

__all__ = ["ErrorCategory", "LLMCall", "error_category", "observed"]

ErrorCategory = Literal[
    "rate_limit", "timeout", "context_length", "invalid_request", "upstream", "cancelled", "other"
]


@frozen
class LLMCall:
    """One model call, as telemetry sees it. ``metrics`` is set when the call succeeded."""

    path: Path
    model: str
    latency_ms: float
    metrics: Metrics | None = None
    error: ErrorCategory | None = None
    error_message: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


_CATEGORIES: tuple[tuple[type[BaseException], ErrorCategory], ...] = (
    (UpstreamRateLimitError, "rate_limit"),
    (UpstreamTimeoutError, "timeout"),
    (ContextLengthExceededError, "context_length"),
    (UpstreamRequestError, "invalid_request"),
    (UpstreamError, "upstream"),
)


def error_category(exc: BaseException) -> ErrorCategory:
    for kind, category in _CATEGORIES:
        if isinstance(exc, kind):
            return category
    return "other"


async def observed(
    events: AsyncGenerator[LLMEvent, None], *, path: Path, model: str, bus: EventBus
) -> AsyncGenerator[LLMEvent, None]:
    """Pass ``events`` through, emitting one :class:`LLMCall` when the call ends."""
    started = time.perf_counter()

    def elapsed() -> float:
        return (time.perf_counter() - started) * 1000

    try:
        async with aclosing(events) as stream:
            async for event in stream:
                if isinstance(event, LLMCompleted):
                    bus.emit(LLMCall(path, model, elapsed(), metrics=event.response.metrics))
                yield event
    except GeneratorExit:
        raise
    except BaseException as exc:
        category: ErrorCategory = "cancelled" if _cancelled(exc) else error_category(exc)
        bus.emit(LLMCall(path, model, elapsed(), error=category, error_message=str(exc)[:500]))
        raise


def _cancelled(exc: BaseException) -> bool:
    import asyncio

    return isinstance(exc, asyncio.CancelledError)
