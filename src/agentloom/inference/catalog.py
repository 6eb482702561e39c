"""The model catalog: which served model id goes to which provider and backend model.

A model is served under its backend id and as ``provider/model``. Static model lists come from
the configuration; the others are discovered from each backend's ``GET /models`` at startup and
again (at most every ``refresh_interval`` seconds) when a request names a model we do not know.
Routed models (``[[models]]``, :mod:`agentloom.inference.router`) are served under their own id,
before any provider's model of the same id.

A backend that cannot be listed (down at startup, say) keeps the models it was last listed with;
:meth:`ModelCatalog.rediscover` lists it again in the background until it answers, and a model
not known meanwhile is a 503 naming the backend and why, not a 404: it may well be served once
the backend is up.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Protocol, runtime_checkable

from agentloom.errors import (
    InvalidRequestError,
    NotFoundError,
    UpstreamError,
    UpstreamTimeoutError,
    UpstreamUnavailableError,
)
from agentloom.frozen import frozen
from agentloom.inference.base import ModelInfo, ModelKind, Provider, ProviderConfig
from agentloom.request_entry import model_not_found
from agentloom.tenancy import current_policy

log = logging.getLogger(__name__)
ROUTER = "router"  # the owner of routed models


@frozen
class ServedModel:
    id: str  # the id clients use
    provider_name: str
    backend_id: str  # the id the backend knows
    info: ModelInfo
    kind: ModelKind = "chat"  # embeddings: its provider's ``embeddings`` patterns name it


@frozen
class Backend:
    """A configured provider as discovery left it: its models, or why none were listed."""

    name: str
    base_url: str | None
    models: tuple[str, ...]
    problem: str | None = None  # why its models could not be listed


@frozen
class Resolved:
    provider: Provider
    model: ServedModel


class ModelCatalog:
    def __init__(
        self,
        providers: Mapping[str, Provider],
        configs: Mapping[str, ProviderConfig],
        *,
        refresh_interval: float = 5.0,
        admission: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        """``admission``: asked before a model is used (the rate limiter); raises to refuse."""
        self._providers = dict(providers)
        self._configs = dict(configs)
        self._refresh_interval = refresh_interval
        self._models: dict[str, list[ModelInfo]] = {
            name: [ModelInfo(id=m, owned_by=name) for m in cfg.models]
            for name, cfg in configs.items()
        }
        self._index: dict[str, ServedModel] = {}
        self._routed: dict[str, Provider] = {}
        self._elsewhere: frozenset[str] = frozenset()  # routed ids of /v1/embeddings
        self._last_refresh = -float("inf")
        self._unlisted: dict[str, str] = {}  # provider -> why its last listing failed
        self._lock = asyncio.Lock()
        self._admission = admission
        self._reindex()

    async def refresh(self, only: Iterable[str] | None = None) -> None:
        """Discover models of every provider that asks for discovery (of those named ``only``),
        concurrently. A provider that cannot be listed keeps the models it had."""
        chosen = None if only is None else frozenset(only)
        names = [
            n
            for n, c in self._configs.items()
            if c.discover and n in self._providers and (chosen is None or n in chosen)
        ]
        results = await asyncio.gather(*(self._discover(n) for n in names))
        for name, models in zip(names, results, strict=True):
            if models is not None:
                self._models[name] = models
        self._last_refresh = time.monotonic()
        self._reindex()

    async def rediscover(self, first: float, most: float) -> None:
        """For the server's life: while a provider cannot be listed, list it again, ``first``
        seconds after the failure, then twice as long each time, at most ``most``."""
        delay = first
        while True:
            await asyncio.sleep(delay)
            if not self._unlisted:
                delay = first
                continue
            await self.refresh(list(self._unlisted))
            delay = first if not self._unlisted else min(delay * 2, most)

    def providers(self) -> list[str]:
        """The providers' names."""
        return list(self._providers)

    def config(self, provider: str) -> ProviderConfig | None:
        """How provider ``provider`` was configured (``None``: no provider of that name)."""
        return self._configs.get(provider)

    def backends(self) -> list[Backend]:
        """Each provider with the models found on it (or why they could not be listed)."""
        return [
            Backend(
                name,
                self._configs[name].base_url if name in self._configs else None,
                tuple(model.id for model in self._models.get(name, ())),
                self._unlisted.get(name),
            )
            for name in self._providers
        ]

    async def probe(self, name: str) -> str | None:
        """Why provider ``name``'s backend cannot be used now (``None``: it can), found by
        listing its models: a discovery, for a provider that discovers them; else a backend
        that answers at all (with no model list, say) is up."""
        config = self._configs.get(name)
        if config is not None and config.discover:
            await self.refresh([name])
            return self._unlisted.get(name)
        try:
            await self._providers[name].list_models()
        except (UpstreamUnavailableError, UpstreamTimeoutError) as exc:
            return exc.message
        except UpstreamError:
            return None  # it answered
        return None

    def only_model(self) -> str:
        """The one model served, for requests that may leave ``model`` out."""
        served = names(m for m in self.models() if m.kind == "chat")
        if not served and self._unlisted:
            raise self._unavailable(None)
        if len(served) != 1:
            raise InvalidRequestError(
                f"'model' is required: this server serves {len(served)} models.",
                param="model",
                code="missing_required_parameter",
            )
        return served[0]

    def route(self, models: Mapping[str, Provider], *, embeddings: Iterable[str] = ()) -> None:
        """Serve the routed ``models`` (by id); ``embeddings``: the routed ids served by
        ``/v1/embeddings`` (called here, a 400 that says so)."""
        self._routed.update(models)
        self._elsewhere |= frozenset(embeddings)
        self._reindex()

    async def resolve(self, model_id: str, *, use: bool = True) -> Resolved:
        """The model and its provider; ``use``: it is about to be called (the admission check
        runs), not only looked at."""
        served = await self._served(model_id)
        if served is None and use and model_id in self._elsewhere:
            raise _not_here(model_id)
        if served is None and use and self._unlisted and current_policy().allows_model(model_id):
            raise self._unavailable(model_id)
        if served is None or not _permitted(served, model_id):
            raise model_not_found(model_id)
        if use and served.kind == "embeddings":
            raise _not_here(model_id)
        if use and self._admission is not None:
            await self._admission(served.id)
        return self._resolved(served)

    async def passes_responses(self, model_id: str) -> bool:
        """Whether ``/v1/responses`` for ``model_id`` goes to its backend's own Responses API
        (its provider's ``responses`` patterns match the backend's id); nothing is checked
        here, the caller's :meth:`resolve` does that."""
        served = await self._served(model_id)
        if served is None:
            return False
        config = self._configs.get(served.provider_name)
        if config is None or served.id in self._routed:
            return False
        return any(fnmatchcase(served.backend_id, p) for p in config.responses)

    async def lookup(self, model_id: str) -> Resolved:
        """The model and its provider, whatever the project may use and without admission: a
        routed model's fallback (the project was let use the routed model)."""
        served = await self._served(model_id)
        if served is None:
            raise model_not_found(model_id)
        return self._resolved(served)

    def all_names(self) -> list[str]:
        """The shortest name of every model served, whatever the running work's project may
        use."""
        return names(self._index.values())

    def models(self) -> list[ServedModel]:
        """The models served, those the running work's project may use."""
        return [m for name, m in self._index.items() if _permitted(m, name)]

    async def _served(self, model_id: str) -> ServedModel | None:
        served = self._index.get(model_id)
        if served is None and await self._refresh_if_stale():
            served = self._index.get(model_id)
        return served

    def _resolved(self, served: ServedModel) -> Resolved:
        routed = self._routed.get(served.id)  # routed ids are indexed first: it is this one
        provider = routed if routed is not None else self._providers[served.provider_name]
        return Resolved(provider=provider, model=served)

    async def _refresh_if_stale(self) -> bool:
        async with self._lock:
            if time.monotonic() - self._last_refresh < self._refresh_interval:
                return False
            await self.refresh()
            return True

    async def _discover(self, name: str) -> list[ModelInfo] | None:
        try:
            models = await self._providers[name].list_models()
        except UpstreamError as exc:
            if name not in self._unlisted:  # once per outage, not once per retry
                log.warning(
                    "model discovery failed for provider %r: %s; retrying in the background",
                    name,
                    exc.message,
                )
            self._unlisted[name] = exc.message
            return None
        if self._unlisted.pop(name, None) is not None:
            log.info("model discovery for provider %r succeeded: %d models", name, len(models))
        return models

    def _unavailable(self, model_id: str | None) -> UpstreamUnavailableError:
        """A model not known while a backend cannot be listed: it may be that backend's."""
        down = "; ".join(f"provider {name!r}: {why}" for name, why in self._unlisted.items())
        what = "No model is known" if model_id is None else f"The model '{model_id}' is not known"
        return UpstreamUnavailableError(
            f"{what} while an inference backend cannot be listed ({down}). Discovery is retried"
            " in the background: try again once the backend is up."
        )

    def _reindex(self) -> None:
        index = {name: self._routed_model(name) for name in self._routed}
        served = [
            (name, info, self._kind(name, info.id))
            for name, models in self._models.items()
            for info in models
        ]
        for name, info, kind in served:
            index.setdefault(info.id, ServedModel(info.id, name, info.id, info, kind))
        for name, info, kind in served:  # the plain ids first: the first provider wins one
            alias = f"{name}/{info.id}"
            index.setdefault(alias, ServedModel(alias, name, info.id, info, kind))
        self._index = index

    def _kind(self, provider: str, backend_id: str) -> ModelKind:
        config = self._configs.get(provider)
        patterns = () if config is None else config.embeddings
        lowered = backend_id.lower()
        return "embeddings" if any(fnmatchcase(lowered, p.lower()) for p in patterns) else "chat"

    def _routed_model(self, model_id: str) -> ServedModel:
        """A routed model, its context window the smallest its deployments' models are known
        to have (what fits there fits wherever it goes)."""
        routed = self._routed[model_id]
        deployments = routed.deployments if isinstance(routed, Spread) else ()
        windows = [
            info.context_window
            for d in deployments
            for info in self._models.get(d.provider, ())
            if info.id == d.model and info.context_window
        ]
        info = ModelInfo(id=model_id, owned_by=ROUTER, context_window=min(windows, default=None))
        return ServedModel(model_id, ROUTER, model_id, info)


class Deployed(Protocol):
    @property
    def provider(self) -> str: ...

    @property
    def model(self) -> str: ...


@runtime_checkable
class Spread(Protocol):
    """A routed model: the deployments (provider, backend model) it spreads its calls over."""

    @property
    def deployments(self) -> Sequence[Deployed]: ...


def _not_here(model_id: str) -> InvalidRequestError | NotFoundError:
    """The error for an embeddings model called for Responses or Chat Completions: a 400 if
    the project may use it, else (as for any model it may not use) a 404."""
    if not current_policy().allows_model(model_id):
        return model_not_found(model_id)
    return InvalidRequestError(
        f"The model '{model_id}' is an embeddings model: use it through /v1/embeddings.",
        param="model",
        code="model_not_supported",
    )


def _permitted(model: ServedModel, name: str) -> bool:
    """Whether the project's policy lets it use ``model`` (asked for as ``name``)."""
    qualified = f"{model.provider_name}/{model.backend_id}"
    return current_policy().allows_model(name, model.id, model.backend_id, qualified)


def names(models: Iterable[ServedModel]) -> list[str]:
    """One name per model (each is indexed under its id and ``provider/id``): the shortest."""
    served: dict[tuple[str, str], str] = {}
    for model in models:
        key = (model.provider_name, model.backend_id)
        served[key] = min(served.get(key, model.id), model.id, key=len)
    return list(served.values())
