"""The routing of one routed model's calls, whatever serves them (chat providers, embedding
models): least calls in flight for its weight first, failover before an answer, cooldown,
fallbacks.

Each call goes to the replica with the fewest calls in flight for its weight among those not
cooling down (a replica of weight 3 takes three calls at once for one of a replica of weight 1);
ties go by smooth weighted round robin, so idle replicas take turns in proportion to their
weights (3, 1: A A B A, A A B A ...; equal weights: plain round robin).

A replica that fails before anything was handed on (it could not be
reached, timed out, or answered 5xx or 429) is left out for ``cooldown`` seconds and the call
is tried on the next one; when every replica has failed, the fallbacks are tried in order, each
routed its own way, and the last error is raised. A request the backend refused (400: the
request's fault) is never tried again, nor is a call that already handed on an item.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator
from contextlib import aclosing, contextmanager
from dataclasses import dataclass
from typing import Generic, TypeAlias, TypeVar

from agentloom.errors import (
    ContextLengthExceededError,
    NotFoundError,
    UpstreamError,
    UpstreamRequestError,
)

__all__ = ["Balancer", "Clock", "Replica", "retryable"]

log = logging.getLogger(__name__)

P = TypeVar("P")  # what serves a call: a chat provider, an embedding model
T = TypeVar("T")
Clock: TypeAlias = Callable[[], float]


@dataclass(eq=False, slots=True)
class Replica(Generic[P]):
    """A deployment as the router sees it: its calls in flight, the end of its cooldown."""

    server: P
    model: str  # the id its backend knows
    label: str  # for the log: "provider/model", or a fallback's id
    weight: float = 1.0  # its share of the calls (> 0)
    in_flight: int = 0
    cooling_until: float = -math.inf
    credit: float = 0.0  # the smooth weighted round robin's count

    @contextmanager
    def busy(self) -> Iterator[None]:
        self.in_flight += 1
        try:
            yield
        finally:
            self.in_flight -= 1


class Balancer(Generic[P]):
    """Spreads the calls of the routed model ``model_id`` over ``replicas``; ``find`` gives a
    fallback (by id) as a replica of its own, or raises :class:`NotFoundError`."""

    def __init__(
        self,
        model_id: str,
        replicas: list[Replica[P]],
        *,
        fallbacks: tuple[str, ...],
        cooldown: float,
        find: Callable[[str], Awaitable[Replica[P]]],
        clock: Clock,
    ) -> None:
        if not replicas:
            raise ValueError(f"model {model_id!r} needs at least one deployment")
        self.model_id = model_id
        self.replicas = replicas
        self._fallbacks = fallbacks
        self._cooldown = cooldown
        self._find = find
        self._clock = clock

    async def routed(self, start: Callable[[P, str], AsyncIterator[T]]) -> AsyncGenerator[T, None]:
        """What ``start`` gives on the first target that answers; a failure before its first
        item moves on to the next target, one after it is the caller's."""
        failure: UpstreamError | None = None
        async with aclosing(self._targets()) as targets:
            async for target in targets:
                with target.busy():
                    items = start(target.server, target.model)
                    try:
                        try:
                            first = await anext(items)
                        except StopAsyncIteration:
                            return
                        except UpstreamError as exc:
                            failure = self._failed(target, exc)
                            continue
                        target.cooling_until = -math.inf  # it answers: back in the rotation
                        yield first
                        async for item in items:
                            yield item
                        return
                    finally:
                        await _close(items)
        assert failure is not None  # there is always a deployment to try
        raise failure

    def first_ready(self) -> Replica[P]:
        """The first replica not cooling down, else the first back."""
        now = self._clock()
        ready = [r for r in self.replicas if r.cooling_until <= now]
        return ready[0] if ready else min(self.replicas, key=_cooldown_end)

    async def _targets(self) -> AsyncGenerator[Replica[P], None]:
        """The deployments to try, picked one at a time, then the fallbacks."""
        tried: list[Replica[P]] = []
        while (replica := self._pick(tried)) is not None:
            tried.append(replica)
            yield replica
        for name in self._fallbacks:
            fallback = await self._fallback(name)
            if fallback is not None:
                yield fallback

    def _pick(self, tried: list[Replica[P]]) -> Replica[P] | None:
        """The least busy deployment for its weight, not tried yet and not cooling down (ties:
        smooth weighted round robin); if every one is cooling down and none was tried, the one
        whose cooldown ends first."""
        now = self._clock()
        left = [r for r in self.replicas if r not in tried]
        ready = [r for r in left if r.cooling_until <= now]
        if ready:
            return _weighted_turn(ready)
        if left and not tried:
            return min(left, key=_cooldown_end)
        return None

    def _failed(self, target: Replica[P], exc: UpstreamError) -> UpstreamError:
        """``exc``, after putting ``target`` in cooldown; raised if no other target may help."""
        if not retryable(exc):
            raise exc
        wait = max(self._cooldown, exc.retry_after or 0.0)  # a 429's retry-after, when longer
        target.cooling_until = self._clock() + wait
        log.warning(
            "model %r: %s failed (%s); left out for %gs",
            self.model_id,
            target.label,
            exc.message,
            wait,
        )
        return exc

    async def _fallback(self, name: str) -> Replica[P] | None:
        """The fallback model ``name`` as a target (its own router, if it has one)."""
        try:
            return await self._find(name)
        except NotFoundError:
            log.warning("model %r: its fallback %r is not served; skipped", self.model_id, name)
            return None


def retryable(exc: UpstreamError) -> bool:
    """Whether another deployment may succeed: not when the request itself was refused."""
    if isinstance(exc, UpstreamRequestError | ContextLengthExceededError):
        return False
    return exc.status is None or exc.status == 429 or exc.status >= 500


def _load(replica: Replica[P]) -> float:
    return replica.in_flight / replica.weight


def _weighted_turn(ready: list[Replica[P]]) -> Replica[P]:
    """The least loaded of ``ready`` for its weight; among equals, the one whose turn it is by
    smooth weighted round robin (each gains its weight, the chosen one gives back the total)."""
    least = min(_load(r) for r in ready)
    tied = [r for r in ready if _load(r) == least]
    if len(tied) == 1:
        return tied[0]
    for replica in tied:
        replica.credit += replica.weight
    chosen = max(tied, key=_credit)
    chosen.credit -= sum(r.weight for r in tied)
    return chosen


def _credit(replica: Replica[P]) -> float:
    return replica.credit


def _cooldown_end(replica: Replica[P]) -> float:
    return replica.cooling_until


async def _close(items: AsyncIterator[object]) -> None:
    if isinstance(items, AsyncGenerator):
        await items.aclose()
