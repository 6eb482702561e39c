"""Rate limits per project and model, enforced across every server process.

The model catalog asks :meth:`RateLimiter.admit` before a model is used. A model with no limit
for the running work's project costs nothing, not even a database read (the limits come with
the project's policy, cached with its keys). A limited one costs one atomic upsert of the shared
minute and day counters. Counting is by fixed windows: a minute (requests and tokens) and a UTC
day (requests). Tokens are counted when a response ends, so a burst of long answers can
overshoot a token limit by what was in flight; the next request then waits.

What the request's limits stand at is kept for the response's ``x-ratelimit-*`` headers, which
the authentication middleware adds (:func:`rate_headers`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from agentloom.errors import RateLimitedError
from agentloom.storage.rate_limits import SqlRateLimitStore
from agentloom.tenancy import RateLimit, current_policy, current_project

__all__ = ["RateLimiter", "RateState", "noting_rates", "rate_headers"]

MINUTE = 60
DAY = 86_400


@dataclass(slots=True)
class RateState:
    """Where a request's limits stood when it was admitted."""

    limit: RateLimit | None = None
    minute_requests: int = 0
    minute_tokens: int = 0
    day_requests: int = 0
    at: float = 0.0


_STATE: ContextVar[RateState | None] = ContextVar("agentloom_rate_state", default=None)


@contextmanager
def noting_rates() -> Iterator[RateState]:
    """A request's rate state, filled in by the limiter while the block runs."""
    state = RateState()
    token = _STATE.set(state)
    try:
        yield state
    finally:
        _STATE.reset(token)


class RateLimiter:
    def __init__(self, store: SqlRateLimitStore) -> None:
        self._store = store

    async def admit(self, model: str) -> None:
        """Count a request for ``model``; a 429 when it is over one of the project's limits."""
        limit = current_policy().rate_limits.get(model)
        if limit is None:
            return
        now = time.time()
        minute, day = _start(now, MINUTE), _start(now, DAY)
        counts = await self._store.hit(current_project(), model, minute=minute, day=day)
        state = _STATE.get()
        if state is not None:
            state.limit, state.at = limit, now
            state.minute_requests = counts.minute_requests
            state.minute_tokens = counts.minute_tokens
            state.day_requests = counts.day_requests
        _check(model, limit, counts.minute_requests, counts.day_requests, counts.minute_tokens, now)

    async def spend(self, model: str, tokens: int) -> None:
        """Count the tokens a response used, if the project limits them for ``model``."""
        limit = current_policy().rate_limits.get(model)
        if limit is None or not limit.tokens_per_minute or tokens <= 0:
            return
        minute = _start(time.time(), MINUTE)
        await self._store.spend(current_project(), model, minute=minute, tokens=tokens)

    async def prune(self) -> None:
        """Forget counters older than yesterday."""
        await self._store.prune(_start(time.time(), DAY) - DAY)


def _start(now: float, width: int) -> int:
    return int(now) // width * width


def _check(model: str, limit: RateLimit, minute: int, day: int, tokens: int, now: float) -> None:
    to_minute = _start(now, MINUTE) + MINUTE - now
    if limit.requests_per_minute and minute > limit.requests_per_minute:
        raise RateLimitedError(
            f"Rate limit reached for {model} on requests per min (RPM): Limit "
            f"{limit.requests_per_minute}, Used {minute - 1}, Requested 1.",
            retry_after=to_minute,
        )
    if limit.requests_per_day and day > limit.requests_per_day:
        raise RateLimitedError(
            f"Rate limit reached for {model} on requests per day (RPD): Limit "
            f"{limit.requests_per_day}, Used {day - 1}, Requested 1.",
            retry_after=_start(now, DAY) + DAY - now,
        )
    if limit.tokens_per_minute and tokens >= limit.tokens_per_minute:
        raise RateLimitedError(
            f"Rate limit reached for {model} on tokens per min (TPM): Limit "
            f"{limit.tokens_per_minute}, Used {tokens}.",
            retry_after=to_minute,
            kind="tokens",
        )


def rate_headers(state: RateState) -> list[tuple[bytes, bytes]]:
    """OpenAI's ``x-ratelimit-*`` headers for a request that was admitted against limits."""
    limit = state.limit
    if limit is None:
        return []
    reset = f"{_start(state.at, MINUTE) + MINUTE - state.at:.3f}s".encode()
    headers: list[tuple[bytes, bytes]] = []
    if limit.requests_per_minute:
        left = max(0, limit.requests_per_minute - state.minute_requests)
        headers += [
            (b"x-ratelimit-limit-requests", str(limit.requests_per_minute).encode()),
            (b"x-ratelimit-remaining-requests", str(left).encode()),
            (b"x-ratelimit-reset-requests", reset),
        ]
    if limit.tokens_per_minute:
        left = max(0, limit.tokens_per_minute - state.minute_tokens)
        headers += [
            (b"x-ratelimit-limit-tokens", str(limit.tokens_per_minute).encode()),
            (b"x-ratelimit-remaining-tokens", str(left).encode()),
            (b"x-ratelimit-reset-tokens", reset),
        ]
    return headers
