"""``[[models]]`` entries of ``kind = "embeddings"``: one embedding model id served by several
OpenAI-compatible ``/embeddings`` endpoints (the deployments' providers), then by its fallbacks
(other routed ids or served embedding models such as ``all-MiniLM-L6-v2``).

The calls are routed as chat calls are (:class:`~agentloom.inference.balancer.Balancer`): least
calls in flight first, a deployment that cannot be reached, times out or answers 5xx or 429 is
left out for the cooldown and the next one is tried, then the fallbacks in order. A deployment
sends a request once and its retries are its provider's ``max_retries``: a failing backend hands
over to the next deployment at once instead of backing off.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import aclosing

from pydantic import SecretStr

from agentloom.config import EmbeddingSettings
from agentloom.inference.balancer import Balancer, Clock, Replica
from agentloom.inference.base import ProviderConfig
from agentloom.inference.catalog import ROUTER
from agentloom.inference.router import Deployment, RouteConfig
from agentloom.retrieval.embedding_models import (
    Embedded,
    EmbeddingModel,
    EmbeddingModelInfo,
    Inputs,
    RemoteEmbeddingModel,
)
from agentloom.retrieval.openai_embeddings import OpenAICompatibleEmbedder

__all__ = ["Lookup", "RoutedEmbeddingModel", "routed_embedding_models"]

Lookup = Callable[[str], EmbeddingModel]  # a served embedding model by name, or NotFoundError


class RoutedEmbeddingModel:
    """An :class:`EmbeddingModel` whose calls go to the least busy of ``deployments`` (each a
    remote model it owns), then to the models ``find`` gives for its fallbacks."""

    def __init__(
        self,
        config: RouteConfig,
        deployments: list[RemoteEmbeddingModel],
        find: Lookup,
        *,
        clock: Clock = time.monotonic,
    ) -> None:
        async def fallback(name: str) -> Replica[EmbeddingModel]:
            model = find(name)
            return Replica(model, model.info.id, name)

        self._info = EmbeddingModelInfo(config.id, ROUTER)
        self._deployments = deployments
        replicas: list[Replica[EmbeddingModel]] = [
            Replica(model, d.model, f"{d.provider}/{d.model}", weight=d.weight)
            for model, d in zip(deployments, config.deployments, strict=True)
        ]
        self._balancer = Balancer(
            config.id,
            replicas,
            fallbacks=config.fallbacks,
            cooldown=config.cooldown,
            find=fallback,
            clock=clock,
        )

    @property
    def info(self) -> EmbeddingModelInfo:
        return self._info

    async def embed(
        self, inputs: Inputs, *, dimensions: int | None = None, user: str | None = None
    ) -> Embedded:
        async def start(model: EmbeddingModel, _: str) -> AsyncIterator[Embedded]:
            yield await model.embed(inputs, dimensions=dimensions, user=user)

        async with aclosing(self._balancer.routed(start)) as answers:
            return await anext(answers)

    async def aclose(self) -> None:
        for model in self._deployments:  # the fallbacks are closed by their owners
            await model.aclose()


def routed_embedding_models(
    configs: list[RouteConfig],
    providers: Mapping[str, ProviderConfig],
    settings: EmbeddingSettings,
    find: Lookup,
) -> list[RoutedEmbeddingModel]:
    """A :class:`RoutedEmbeddingModel` for each of ``configs`` (embeddings routes); a deployment
    batches as ``settings`` say and connects as its provider does."""
    return [
        RoutedEmbeddingModel(
            config, [_deployment(d, providers, settings) for d in config.deployments], find
        )
        for config in configs
    ]


def _deployment(
    deployment: Deployment, providers: Mapping[str, ProviderConfig], settings: EmbeddingSettings
) -> RemoteEmbeddingModel:
    provider = providers[deployment.provider]
    key = SecretStr(provider.api_key) if provider.api_key is not None else None
    connection = settings.model_copy(
        update={
            "type": "openai_compatible",
            "base_url": provider.base_url,
            "model": deployment.model,
            "api_key": key,
            "api_key_env": None,
            "dimensions": None,
            "timeout": provider.timeout,
            "max_retries": provider.max_retries,
        }
    )
    return RemoteEmbeddingModel(OpenAICompatibleEmbedder(connection), deployment.provider)
