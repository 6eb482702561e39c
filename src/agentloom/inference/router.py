"""One model id served by several deployments (a provider and its model), with fallbacks.

A :class:`RoutedModel` is a provider of its own, registered in the catalog under its id, so the
agent loop and the Chat Completions gateway use it as they use any provider. Its calls are
spread over the deployments, failed over and fallen back as :mod:`.balancer` does. A
``[[models]]`` entry of ``kind = "embeddings"`` is routed the same way on ``/v1/embeddings``
(:mod:`agentloom.retrieval.routed_embeddings`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import aclosing
from typing import Final, TypeAlias

from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.inference.balancer import Balancer, Clock, Replica
from agentloom.inference.base import (
    CHAT_PATH,
    ChatCompletions,
    ChatRequest,
    Chunk,
    ModelInfo,
    ModelKind,
    Provider,
    TokenCount,
    chat_completions_of,
)
from agentloom.inference.catalog import ROUTER, Resolved

__all__ = ["Deployment", "RouteConfig", "RouteKind", "RoutedModel", "routed_models"]

Find: TypeAlias = Callable[[str], Awaitable[Resolved]]  # a fallback's provider and backend id
RouteKind: TypeAlias = ModelKind  # the API a routed id is served on
DEFAULT_COOLDOWN: Final = 30.0


@frozen
class Deployment:
    provider: str  # a provider's name
    model: str  # the id that provider's backend knows
    weight: float = 1.0  # its share of the calls


@frozen
class RouteConfig:
    """A ``[[models]]`` entry: the id clients use, where it is served, what replaces it."""

    id: str
    deployments: tuple[Deployment, ...]
    fallbacks: tuple[str, ...] = ()  # other model ids, tried in order
    cooldown: float = DEFAULT_COOLDOWN  # seconds a failing deployment is left out
    kind: RouteKind = "chat"  # chat: Responses and Chat Completions; or embeddings


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
        async def fallback(name: str) -> Replica[Provider]:
            resolved = await find(name)
            return Replica(resolved.provider, resolved.model.backend_id, name)

        self.id = config.id
        self.deployments = config.deployments
        self._balancer = Balancer(
            config.id,
            [_replica(config.id, d, providers) for d in config.deployments],
            fallbacks=config.fallbacks,
            cooldown=config.cooldown,
            find=fallback,
            clock=clock,
        )

    # --- Provider ----------------------------------------------------------------------------

    def stream(self, request: ChatRequest) -> AsyncGenerator[Chunk, None]:
        def start(provider: Provider, model: str) -> AsyncIterator[Chunk]:
            return provider.stream(dataclasses.replace(request, model=model))

        return self._balancer.routed(start)

    async def count_tokens(self, request: ChatRequest) -> TokenCount:
        """Counted by the first deployment not cooling down (else the first back)."""
        replica = self._balancer.first_ready()
        return await replica.server.count_tokens(dataclasses.replace(request, model=replica.model))

    async def list_models(self) -> list[ModelInfo]:
        return [ModelInfo(id=self.id, owned_by=ROUTER)]

    async def aclose(self) -> None:
        return None  # the providers are closed by whoever built them

    # --- ChatCompletions ---------------------------------------------------------------------

    async def complete(self, body: dict[str, object], path: str = CHAT_PATH) -> dict[str, object]:
        async def start(provider: Provider, model: str) -> AsyncIterator[dict[str, object]]:
            yield await self._chat(provider).complete({**body, "model": model}, path)

        async with aclosing(self._balancer.routed(start)) as answers:
            return await anext(answers)

    def stream_data(
        self, body: dict[str, object], path: str = CHAT_PATH
    ) -> AsyncGenerator[list[str], None]:
        def start(provider: Provider, model: str) -> AsyncIterator[list[str]]:
            return self._chat(provider).stream_data({**body, "model": model}, path)

        return self._balancer.routed(start)

    def _chat(self, provider: Provider) -> ChatCompletions:
        chat = chat_completions_of(provider)
        if chat is None:
            raise InvalidRequestError(
                f"The model '{self.id}' is routed to a provider that does not take Chat"
                " Completions requests; use it through /v1/responses.",
                param="model",
                code="model_not_supported",
            )
        return chat


def _replica(
    model_id: str, deployment: Deployment, providers: Mapping[str, Provider]
) -> Replica[Provider]:
    provider = providers.get(deployment.provider)
    if provider is None:
        raise ValueError(f"model {model_id!r}: no provider named {deployment.provider!r}")
    label = f"{deployment.provider}/{deployment.model}"
    return Replica(provider, deployment.model, label, weight=deployment.weight)


def routed_models(
    configs: list[RouteConfig], providers: Mapping[str, Provider], find: Find
) -> dict[str, Provider]:
    """A :class:`RoutedModel` for each of ``configs`` (chat routes), by id."""
    return {config.id: RoutedModel(config, providers, find) for config in configs}
