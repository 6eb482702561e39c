"""Rate limits per project and model, enforced across every server process.

The model catalog asks :meth:`RateLimiter.admit` before a model is used. A model with no limit
for the running work's project costs nothing, not even a database read: the limits come with
the project's policy, which is cached with its keys.

A limited model is counted in shared rows of the database: a minute (requests and tokens) and
a UTC day (requests), fixed windows, each incremented by an atomic upsert. A process does not
write once per request. It reserves a *lease* of requests at once and admits against it
locally until the lease runs out. A lease is at most :data:`MAX_LEASE` requests, and at most a
twentieth of the limit, so a limit of 20 or less is counted request by request. The shared
count is therefore never below what was admitted. Reserved requests a process did not use count
until their window ends: other processes may be refused up to a lease early, never let through
late. Tokens are counted when a response ends, gathered in memory and added with the next lease
(or at the next flush, every second). Responses in flight can overshoot a token limit; the next
request then waits.

Where the request's limits stood when it was admitted is kept for the response's
``x-ratelimit-*`` headers, which the authentication middleware adds (:func:`rate_headers`).
"""

from __future__ import annotations

import asyncio
import time
from contextlib import AbstractContextManager
from contextvars import ContextVar, Token
from dataclasses import dataclass

from agentloom.errors import RateLimitedError
from agentloom.storage.rate_limits import Counts, SqlRateLimitStore
from agentloom.tenancy import RateLimit, current_policy, current_project

__all__ = ["MAX_LEASE", "RateLimiter", "RateState", "noting_rates", "rate_headers"]

MINUTE = 60
DAY = 86_400
MAX_LEASE = 16  # requests a process reserves at once, at most


@dataclass(slots=True)
class RateState:
    """Where a request's limits stood when it was admitted."""

    limit: RateLimit | None = None
    minute_requests: int = 0
    minute_tokens: int = 0
    day_requests: int = 0
    at: float = 0.0


@dataclass(slots=True)
class _Lease:
    """Requests this process reserved in one minute (and day) window, and the shared counts
    when it did."""

    minute: int
    day: int
    left: int
    counts: Counts


_STATE: ContextVar[RateState | None] = ContextVar("agentloom_rate_state", default=None)


def noting_rates() -> AbstractContextManager[RateState]:
    """A request's rate state, filled in by the limiter while the block runs."""
    return _Noting()


class _Noting(AbstractContextManager[RateState]):
    """:func:`noting_rates`' block: an object, not a generator (every request enters one)."""

    __slots__ = ("_token",)

    def __init__(self) -> None:
        self._token: Token[RateState | None] | None = None

    def __enter__(self) -> RateState:
        state = RateState()
        self._token = _STATE.set(state)
        return state

    def __exit__(self, *_: object) -> None:
        assert self._token is not None, "entered first"
        _STATE.reset(self._token)


class RateLimiter:
    def __init__(self, store: SqlRateLimitStore) -> None:
        self._store = store
        self._leases: dict[tuple[str, str], _Lease] = {}
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._tokens: dict[tuple[str, str, int], int] = {}  # spent, not yet written

    async def admit(self, model: str) -> None:
        """Count a request for ``model``; a 429 when it is over one of the project's limits."""
        limit = current_policy().rate_limits.get(model)
        if limit is None:
            return
        now = time.time()
        minute, day = _start(now, MINUTE), _start(now, DAY)
        key = (current_project(), model)
        lease = self._leases.get(key)
        if not _usable(lease, minute, day):
            async with self._locks.setdefault(key, asyncio.Lock()):  # one reservation at a time
                lease = self._leases.get(key)
                if not _usable(lease, minute, day):
                    lease = await self._reserve(key, limit, minute, day)
        assert lease is not None
        lease.left -= 1
        used = lease.counts.minute_requests - lease.left
        _note(limit, now, used, lease)
        _check_tokens(model, limit, lease.counts.minute_tokens, now)

    async def _reserve(
        self, key: tuple[str, str], limit: RateLimit, minute: int, day: int
    ) -> _Lease:
        size = _lease_size(limit)
        tokens = self._tokens.pop((*key, minute), 0)
        counts = await self._store.hit(*key, minute=minute, day=day, requests=size, tokens=tokens)
        granted = size - _over(limit, counts)
        if granted <= 0:
            raise _refusal(key[1], limit, counts, time.time())
        lease = _Lease(minute, day, granted, counts)
        self._leases[key] = lease
        return lease

    def spend(self, model: str, tokens: int) -> None:
        """Count the tokens a response used, if the project limits them for ``model``."""
        limit = current_policy().rate_limits.get(model)
        if limit is None or not limit.tokens_per_minute or tokens <= 0:
            return
        key = (current_project(), model, _start(time.time(), MINUTE))
        self._tokens[key] = self._tokens.get(key, 0) + tokens
        lease = self._leases.get(key[:2])
        if lease is not None and lease.minute == key[2]:  # seen by this process's next admit
            lease.counts = Counts(
                lease.counts.minute_requests,
                lease.counts.minute_tokens + tokens,
                lease.counts.day_requests,
            )

    async def flush(self) -> None:
        """Add the tokens spent since the last write to the shared counts."""
        pending, self._tokens = self._tokens, {}
        for (project, model, minute), tokens in pending.items():
            day = _start(minute, DAY)
            await self._store.hit(project, model, minute=minute, day=day, requests=0, tokens=tokens)

    async def prune(self) -> None:
        """Forget counters older than yesterday."""
        await self._store.prune(_start(time.time(), DAY) - DAY)


def _usable(lease: _Lease | None, minute: int, day: int) -> bool:
    return lease is not None and lease.left > 0 and (lease.minute, lease.day) == (minute, day)


def _start(now: float, width: int) -> int:
    return int(now) // width * width


def _lease_size(limit: RateLimit) -> int:
    """Requests to reserve at once: at most a twentieth of each request limit."""
    sizes = [MAX_LEASE]
    for most in (limit.requests_per_minute, limit.requests_per_day):
        if most:
            sizes.append(max(1, most // 20))
    return min(sizes)


def _over(limit: RateLimit, counts: Counts) -> int:
    """How far the counts (this reservation included) are over the request limits."""
    over = 0
    if limit.requests_per_minute:
        over = max(over, counts.minute_requests - limit.requests_per_minute)
    if limit.requests_per_day:
        over = max(over, counts.day_requests - limit.requests_per_day)
    return over


def _note(limit: RateLimit, now: float, used: int, lease: _Lease) -> None:
    state = _STATE.get()
    if state is not None:
        state.limit, state.at = limit, now
        state.minute_requests = used
        state.minute_tokens = lease.counts.minute_tokens
        state.day_requests = lease.counts.day_requests


def _refusal(model: str, limit: RateLimit, counts: Counts, now: float) -> RateLimitedError:
    minute_over = limit.requests_per_minute and counts.minute_requests > limit.requests_per_minute
    if minute_over:
        return RateLimitedError(
            f"Rate limit reached for {model} on requests per min (RPM): Limit "
            f"{limit.requests_per_minute}, Used {limit.requests_per_minute}, Requested 1.",
            retry_after=_start(now, MINUTE) + MINUTE - now,
        )
    return RateLimitedError(
        f"Rate limit reached for {model} on requests per day (RPD): Limit "
        f"{limit.requests_per_day}, Used {limit.requests_per_day}, Requested 1.",
        retry_after=_start(now, DAY) + DAY - now,
    )


def _check_tokens(model: str, limit: RateLimit, tokens: int, now: float) -> None:
    if limit.tokens_per_minute and tokens >= limit.tokens_per_minute:
        raise RateLimitedError(
            f"Rate limit reached for {model} on tokens per min (TPM): Limit "
            f"{limit.tokens_per_minute}, Used {tokens}.",
            retry_after=_start(now, MINUTE) + MINUTE - now,
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
