"""Retries of transient upstream failures: exponential backoff with jitter, honouring the
``retry-after`` a rate-limited backend sends.

Transient: a rate limit (429), a timeout, a 5xx, or no answer at all (the connection failed).
A request the backend rejected (any other 4xx) fails at once: sending it again changes nothing.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import field
from typing import TypeVar

import anyio

from agentloom.errors import (
    UpstreamError,
    UpstreamRateLimitError,
    UpstreamRequestError,
    UpstreamTimeoutError,
)
from agentloom.frozen import frozen

__all__ = ["RetryPolicy", "Sleep", "is_transient", "with_retries"]

log = logging.getLogger(__name__)

_T = TypeVar("_T")
Sleep = Callable[[float], Awaitable[None]]


@frozen
class RetryPolicy:
    """Up to ``max_retries`` retries; before retry ``n`` (from 0) a wait of the backend's
    ``retry-after`` or else of ``base_delay * 2**n`` with "equal jitter" (between half and all
    of it), never more than ``max_delay``. ``sleep`` and ``jitter`` are seams for tests."""

    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 30.0
    sleep: Sleep = anyio.sleep
    jitter: Callable[[], float] = field(default=random.random)  # in [0, 1)

    def delay(self, retry: int, failure: UpstreamError) -> float:
        """Seconds to wait before retry number ``retry`` (0 is the first) after ``failure``."""
        if failure.retry_after is not None:
            return min(failure.retry_after, self.max_delay)
        ceiling = min(self.base_delay * 2.0**retry, self.max_delay)
        return ceiling / 2 * (1 + self.jitter())


def is_transient(failure: UpstreamError) -> bool:
    """Whether sending the same request again may succeed."""
    if isinstance(failure, UpstreamRateLimitError | UpstreamTimeoutError):
        return True
    if isinstance(failure, UpstreamRequestError):
        return False
    return failure.status is None or failure.status >= 500


async def with_retries(call: Callable[[], Awaitable[_T]], policy: RetryPolicy, what: str) -> _T:
    """``await call()``, again after each transient :class:`UpstreamError` while retries are
    left; the last failure is raised as it is."""
    retry = 0
    while True:
        try:
            return await call()
        except UpstreamError as failure:
            if retry >= policy.max_retries or not is_transient(failure):
                raise
            wait = policy.delay(retry, failure)
            log.warning(
                "%s failed (%s); retry %d of %d in %.2f s",
                what,
                failure.message,
                retry + 1,
                policy.max_retries,
                wait,
            )
        await policy.sleep(wait)
        retry += 1
