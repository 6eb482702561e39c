"""Embeddings for clients (``POST /v1/embeddings``) in the caller's project.

The served models come from :mod:`agentloom.retrieval.embedding_models`. A request is held to
its project's model permissions (a model it may not use does not exist for it, as in the model
catalog), its rate limits (admitted before the model runs, its tokens spent after) and is
recorded in the usage ledger, where ``/v1/organization/usage/embeddings`` reports it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from functools import partial
from typing import Final

from agentloom.api.embeddings import CreateEmbeddingResponse, EmbeddingsRequest
from agentloom.errors import InvalidRequestError, NotFoundError
from agentloom.offload import off_loop
from agentloom.request_entry import current_entry, model_not_found
from agentloom.retrieval.embedding_models import EmbeddingModel, EmbeddingModelInfo
from agentloom.services.organization.rate_limits import RateLimiter
from agentloom.services.organization.usage import UsageLedger
from agentloom.tenancy import current_policy

__all__ = ["OFF_LOOP_VALUES", "EmbeddingsService"]

OFF_LOOP_VALUES: Final = 65_536  # floats in an answer from which it is built in a worker thread


class EmbeddingsService:
    """``chat_models``: the routed ids of Responses and Chat Completions (asked for here, a
    400 that says so)."""

    def __init__(
        self,
        models: Sequence[EmbeddingModel],
        limiter: RateLimiter,
        usage: UsageLedger,
        *,
        chat_models: Iterable[str] = (),
        elsewhere: Callable[[str], Awaitable[EmbeddingModel | None]] | None = None,
    ) -> None:
        """``elsewhere``: an embedding model of a backend's, for a name served by none here."""
        self._elsewhere = elsewhere
        self._by_name: dict[str, EmbeddingModel] = {}
        self._models: list[EmbeddingModel] = []
        self._chat_models = frozenset(chat_models)
        self._limiter = limiter
        self._usage = usage
        self._add(models)

    def route(self, models: Sequence[EmbeddingModel]) -> None:
        """Serve the routed ``models`` too, before any other model of the same name."""
        served = self._models
        self._by_name, self._models = {}, []
        self._add([*models, *served])

    def models(self) -> list[EmbeddingModelInfo]:
        """The models served that the running work's project may use, each once."""
        served = {id(model): model.info for model in self._by_name.values()}
        return [info for info in served.values() if _permitted(info, info.id)]

    def names(self) -> list[str]:
        """The id of every model served, whatever the running work's project may use."""
        return list(dict.fromkeys(model.info.id for model in self._by_name.values()))

    def lookup(self, name: str) -> EmbeddingModel:
        """The model served as ``name``, whatever the project may use: a routed model's
        fallback (the project was let use the routed model)."""
        model = self._by_name.get(name)
        if model is None:
            raise model_not_found(name)
        return model

    def find(self, name: str) -> EmbeddingModelInfo:
        """The model served as ``name``; a 404 when there is none the project may use."""
        return self._resolve(name).info

    async def create(self, request: EmbeddingsRequest) -> CreateEmbeddingResponse:
        model = await self._model(request.model)
        served = model.info.id
        await self._limiter.admit(served)
        embedded = await model.embed(
            request.input, dimensions=request.dimensions, user=request.user
        )
        self._usage.record_embeddings(served, embedded.prompt_tokens)
        entry = current_entry()
        if entry is not None:
            entry.user = request.user
        build = partial(
            CreateEmbeddingResponse.of,
            embedded.vectors,
            model=served,
            prompt_tokens=embedded.prompt_tokens,
            encoding_format=request.encoding_format,
        )
        return await off_loop(embedded.vectors.size >= OFF_LOOP_VALUES, build)

    async def aclose(self) -> None:
        for model in self._models:
            await model.aclose()

    async def _model(self, name: str) -> EmbeddingModel:
        """The model served as ``name``: one of this server's, else a backend's own."""
        try:
            return self._resolve(name)
        except NotFoundError:
            found = None if self._elsewhere is None else await self._elsewhere(name)
            if found is None:
                raise
            return found

    def _add(self, models: Sequence[EmbeddingModel]) -> None:
        for model in models:
            for name in model.info.names:
                self._by_name.setdefault(name, model)  # the first model keeps a shared name
        self._models.extend(models)

    def _resolve(self, name: str) -> EmbeddingModel:
        model = self._by_name.get(name)
        if model is None and name in self._chat_models and current_policy().allows_model(name):
            raise InvalidRequestError(
                f"The model '{name}' is a chat model, not an embeddings model: use it through"
                " /v1/responses or /v1/chat/completions.",
                param="model",
                code="model_not_supported",
            )
        if model is None or not _permitted(model.info, name):
            raise model_not_found(name)
        return model


def _permitted(info: EmbeddingModelInfo, name: str) -> bool:
    """Whether the project's policy lets it use the model (asked for as ``name``)."""
    return current_policy().allows_model(name, *info.names)
