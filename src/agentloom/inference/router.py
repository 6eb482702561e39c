"""One model id served by several deployments (a provider and its model), with fallbacks.

A :class:`RoutedModel` is a provider of its own, registered in the catalog under its id, so the
agent loop and the Chat Completions gateway use it as they use any provider. Each call goes to
the deployment with the fewest calls in flight among those not cooling down (ties: round robin).
A deployment that fails before anything was handed on (it could not be reached, timed out, or
answered 5xx or 429) is left out for ``cooldown`` seconds and the call is tried on the next one;
when every deployment has failed, the fallback models are tried in order, each routed its own
way, and the last error is raised. A request the backend refused (400: the request's fault) is
never tried again, nor is a call that already handed on a chunk: the caller has seen tokens.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import aclosing, contextmanager
from dataclasses import dataclass
from typing import Final, TypeAlias, TypeVar

from agentloom.errors import (
    ContextLengthExceededError,
    InvalidRequestError,
    NotFoundError,
    UpstreamError,
    UpstreamRequestError,
)
from agentloom.inference.base import (
    CHAT_PATH,
    ChatCompletions,
    ChatRequest,
    Chunk,
    ModelInfo,
    Provider,
    TokenCount,
)
from agentloom.inference.catalog import ROUTER, Resolved

__all__ = ["Deployment", "RouteConfig", "RoutedModel", "routed_models"]

log = logging.getLogger(__name__)

T = TypeVar("T")
Clock: TypeAlias = Callable[[], float]
Find: TypeAlias = Callable[[str], Awaitable[Resolved]]  # a fallback's provider and backend id
_Open: TypeAlias = Callable[[Provider, str], AsyncIterator[T]]
DEFAULT_COOLDOWN: Final = 30.0


@dataclass(frozen=True, slots=True)
class Deployment:
    provider: str  # a provider's name
    model: str  # the id that provider's backend knows


@dataclass(frozen=True, slots=True)
class RouteConfig:
    """A ``[[models]]`` entry: the id clients use, where it is served, what replaces it."""

    id: str
    deployments: tuple[Deployment, ...]
    fallbacks: tuple[str, ...] = ()  # other model ids, tried in order
    cooldown: float = DEFAULT_COOLDOWN  # seconds a failing deployment is left out


@dataclass(eq=False, slots=True)
class _Replica:
    """A deployment as the router sees it: its calls in flight, the end of its cooldown."""

    provider: Provider
    model: str
    label: str  # "provider/model", for the log
    in_flight: int = 0
    cooling_until: float = -math.inf

    @contextmanager
    def busy(self) -> Iterator[None]:
        self.in_flight += 1
        try:
            yield
        finally:
            self.in_flight -= 1


class RoutedModel:
    """A :class:`~agentloom.inference.base.Provider` (and ``ChatCompletions``) that spreads
    calls over its deployments; ``find`` looks up a fallback model by id."""

    def __init__(
        self,
        config: RouteConfig,
        providers: Mapping[str, Provider],
        find: Find,
        *,
        clock: Clock = time.monotonic,
    ) -> None:
        if not config.deployments:
            raise ValueError(f"model {config.id!r} needs at least one deployment")
        self.id = config.id
        self._replicas = [_replica(config.id, d, providers) for d in config.deployments]
        self._fallbacks = config.fallbacks
        self._cooldown = config.cooldown
        self._find = find
        self._clock = clock
        self._turn = 0  # where the round robin starts

    # --- Provider ----------------------------------------------------------------------------

    def stream(self, request: ChatRequest) -> AsyncGenerator[Chunk, None]:
        def start(provider: Provider, model: str) -> AsyncIterator[Chunk]:
            return provider.stream(dataclasses.replace(request, model=model))

        return self._routed(start)

    async def count_tokens(self, request: ChatRequest) -> TokenCount:
        """Counted by the first deployment not cooling down (else the first back)."""
        now = self._clock()
        ready = [r for r in self._replicas if r.cooling_until <= now]
        replica = ready[0] if ready else min(self._replicas, key=_cooldown_end)
        return await replica.provider.count_tokens(
            dataclasses.replace(request, model=replica.model)
        )

    async def list_models(self) -> list[ModelInfo]:
        return [ModelInfo(id=self.id, owned_by=ROUTER)]

    async def aclose(self) -> None:
        return None  # the providers are closed by whoever built them

    # --- ChatCompletions ---------------------------------------------------------------------

    async def complete(self, body: dict[str, object], path: str = CHAT_PATH) -> dict[str, object]:
        async def start(provider: Provider, model: str) -> AsyncIterator[dict[str, object]]:
            yield await self._chat(provider).complete({**body, "model": model}, path)

        async with aclosing(self._routed(start)) as answers:
            return await anext(answers)

    def stream_data(
        self, body: dict[str, object], path: str = CHAT_PATH
    ) -> AsyncGenerator[list[str], None]:
        def start(provider: Provider, model: str) -> AsyncIterator[list[str]]:
            return self._chat(provider).stream_data({**body, "model": model}, path)

        return self._routed(start)

    # --- routing -----------------------------------------------------------------------------

    async def _routed(self, start: _Open[T]) -> AsyncGenerator[T, None]:
        """What ``start`` gives on the first target that answers; a failure before its first
        item moves on to the next target, one after it is the caller's."""
        failure: UpstreamError | None = None
        async with aclosing(self._targets()) as targets:
            async for target in targets:
                with target.busy():
                    items = start(target.provider, target.model)
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

    async def _targets(self) -> AsyncGenerator[_Replica, None]:
        """The deployments to try, picked one at a time, then the fallbacks."""
        tried: list[_Replica] = []
        while (replica := self._pick(tried)) is not None:
            tried.append(replica)
            yield replica
        for name in self._fallbacks:
            fallback = await self._fallback(name)
            if fallback is not None:
                yield fallback

    def _pick(self, tried: list[_Replica]) -> _Replica | None:
        """The least busy deployment not tried yet and not cooling down (ties: round robin);
        if every one is cooling down and none was tried, the one whose cooldown ends first."""
        now = self._clock()
        count = len(self._replicas)
        rotation = [self._replicas[(self._turn + i) % count] for i in range(count)]
        left = [r for r in rotation if r not in tried]
        ready = [r for r in left if r.cooling_until <= now]
        if ready:
            chosen = min(ready, key=_load)
        elif left and not tried:
            chosen = min(left, key=_cooldown_end)
        else:
            return None
        self._turn = self._replicas.index(chosen) + 1
        return chosen

    def _failed(self, target: _Replica, exc: UpstreamError) -> UpstreamError:
        """``exc``, after putting ``target`` in cooldown; raised if no other target may help."""
        if not _retryable(exc):
            raise exc
        target.cooling_until = self._clock() + self._cooldown
        log.warning(
            "model %r: %s failed (%s); left out for %gs",
            self.id,
            target.label,
            exc.message,
            self._cooldown,
        )
        return exc

    async def _fallback(self, name: str) -> _Replica | None:
        """The fallback model ``name`` as a target (its own router, if it has one)."""
        try:
            resolved = await self._find(name)
        except NotFoundError:
            log.warning("model %r: its fallback %r is not served; skipped", self.id, name)
            return None
        return _Replica(resolved.provider, resolved.model.backend_id, name)

    def _chat(self, provider: Provider) -> ChatCompletions:
        if not isinstance(provider, ChatCompletions):
            raise InvalidRequestError(
                f"The model '{self.id}' is routed to a provider that does not take Chat"
                " Completions requests; use it through /v1/responses.",
                param="model",
                code="model_not_supported",
            )
        return provider


def _retryable(exc: UpstreamError) -> bool:
    """Whether another deployment may succeed: not when the request itself was refused."""
    if isinstance(exc, UpstreamRequestError | ContextLengthExceededError):
        return False
    return exc.status is None or exc.status == 429 or exc.status >= 500


def _load(replica: _Replica) -> int:
    return replica.in_flight


def _cooldown_end(replica: _Replica) -> float:
    return replica.cooling_until


async def _close(items: AsyncIterator[object]) -> None:
    if isinstance(items, AsyncGenerator):
        await items.aclose()


def _replica(model_id: str, deployment: Deployment, providers: Mapping[str, Provider]) -> _Replica:
    provider = providers.get(deployment.provider)
    if provider is None:
        raise ValueError(f"model {model_id!r}: no provider named {deployment.provider!r}")
    return _Replica(provider, deployment.model, f"{deployment.provider}/{deployment.model}")


def routed_models(
    configs: list[RouteConfig], providers: Mapping[str, Provider], find: Find
) -> dict[str, Provider]:
    """A :class:`RoutedModel` for each of ``configs``, by id."""
    return {config.id: RoutedModel(config, providers, find) for config in configs}
