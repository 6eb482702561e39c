"""Embedding models that a chat backend lists among its models (an OpenAI-compatible server
with an embedding model loaded: vLLM, Ollama, llama.cpp), served on ``/v1/embeddings`` by
passing the request to that backend's own ``/embeddings``.

The model catalog cannot tell such a model from a chat model (``/models`` says no kind), so
``/v1/embeddings`` asks for a model it has no embedding model of by that name here: if the
catalog serves it from an OpenAI-compatible backend the project may use, the request goes there
(and a backend that has no such embedding model answers its own error).
"""

from __future__ import annotations

from pydantic import SecretStr

from agentloom.config import EmbeddingSettings
from agentloom.errors import NotFoundError
from agentloom.inference.catalog import ModelCatalog
from agentloom.retrieval.embedding_models import EmbeddingModel, RemoteEmbeddingModel
from agentloom.retrieval.openai_embeddings import OpenAICompatibleEmbedder

__all__ = ["BackendEmbeddings"]


class BackendEmbeddings:
    def __init__(self, catalog: ModelCatalog) -> None:
        self._catalog = catalog
        self._made: dict[tuple[str, str], EmbeddingModel] = {}  # by provider and backend id

    async def find(self, name: str) -> EmbeddingModel | None:
        """The backend's embedding model served as ``name``, if a backend serves it."""
        try:
            resolved = await self._catalog.resolve(name, use=False)
        except NotFoundError:
            return None
        config = self._catalog.config(resolved.model.provider_name)
        if config is None or config.type != "openai_compatible" or not config.base_url:
            return None
        key = (config.name, resolved.model.backend_id)
        made = self._made.get(key)
        if made is None:
            settings = EmbeddingSettings(
                type="openai_compatible",
                base_url=config.base_url,
                model=key[1],
                api_key=SecretStr(config.api_key) if config.api_key else None,
            )
            made = RemoteEmbeddingModel(OpenAICompatibleEmbedder(settings), config.name)
            self._made[key] = made
        return made

    async def aclose(self) -> None:
        for model in self._made.values():
            await model.aclose()
