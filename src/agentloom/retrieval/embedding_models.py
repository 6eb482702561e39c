"""The embedding models served to clients (``POST /v1/embeddings``), built from ``[embeddings]``.

- ``all-MiniLM-L6-v2`` (also known as ``sentence-transformers/all-MiniLM-L6-v2``): the embedded
  MiniLM, served whenever its model package is installed, whichever embedder the vector stores
  use. It gives 384 dimensions; its tokens are counted by its own WordPiece tokenizer ([CLS]
  and [SEP] included); token-id input is decoded to text first (:mod:`.token_ids`).
- The model of ``[embeddings] type = "openai_compatible"``, under its configured name: requests
  go to that backend with the client's ``dimensions`` and ``user``, token ids pass through, and
  the vectors come back as the backend sent them, with the tokens it reported (estimated at four
  characters a token when it reports none). It is owned by the ``[[providers]]`` entry with the
  same ``base_url`` if there is one, else by the backend's host.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Final, Protocol
from urllib.parse import urlsplit

import anyio.to_thread
import numpy as np
from numpy.typing import NDArray
from typing_extensions import TypeIs

from agentloom.config import ConfigError, EmbeddingSettings
from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.retrieval.embeddings import MiniLMEmbedder
from agentloom.retrieval.minilm import DIMENSIONS, MODEL_NAME
from agentloom.retrieval.openai_embeddings import OpenAICompatibleEmbedder
from agentloom.retrieval.token_ids import decode_token_arrays

__all__ = [
    "Embedded",
    "EmbeddedMiniLM",
    "EmbeddingModel",
    "EmbeddingModelInfo",
    "Inputs",
    "RemoteEmbeddingModel",
    "are_texts",
    "build_embedding_models",
]

OWNER: Final = "agentloom"  # owner of the models that run in the server itself
_CHARS_PER_TOKEN: Final = 4

F32 = NDArray[np.float32]
Inputs = Sequence[str] | Sequence[list[int]]  # texts, or token arrays
log = logging.getLogger(__name__)


@frozen
class EmbeddingModelInfo:
    id: str
    owned_by: str
    aliases: tuple[str, ...] = ()  # other names it answers to

    @property
    def names(self) -> tuple[str, ...]:
        return (self.id, *self.aliases)


@frozen
class Embedded:
    """The vectors of a request's inputs (one row each) and the tokens they took."""

    vectors: F32
    prompt_tokens: int


class EmbeddingModel(Protocol):
    @property
    def info(self) -> EmbeddingModelInfo: ...

    async def embed(
        self, inputs: Inputs, *, dimensions: int | None = None, user: str | None = None
    ) -> Embedded:
        """Vectors of ``inputs``; a 400 for ``dimensions`` the model cannot give."""
        ...

    async def aclose(self) -> None: ...


def are_texts(inputs: Inputs) -> TypeIs[Sequence[str]]:
    """Whether ``inputs`` are texts (a request's inputs are all of one kind)."""
    return not inputs or isinstance(inputs[0], str)


class EmbeddedMiniLM:
    """all-MiniLM-L6-v2 in this process (:class:`MiniLMEmbedder`'s model), in a worker thread."""

    def __init__(self, embedder: MiniLMEmbedder) -> None:
        self._embedder = embedder
        self._info = EmbeddingModelInfo(MODEL_NAME, OWNER, (f"sentence-transformers/{MODEL_NAME}",))

    @property
    def info(self) -> EmbeddingModelInfo:
        return self._info

    async def embed(
        self, inputs: Inputs, *, dimensions: int | None = None, user: str | None = None
    ) -> Embedded:
        if dimensions is not None and dimensions != DIMENSIONS:
            raise InvalidRequestError(
                f"The model '{MODEL_NAME}' gives {DIMENSIONS} dimensions only: leave "
                f"'dimensions' out or set it to {DIMENSIONS}.",
                param="dimensions",
                code="invalid_value",
            )
        return await anyio.to_thread.run_sync(self._embed, inputs)

    async def aclose(self) -> None:
        return None  # the model is shared by the process

    def _embed(self, inputs: Inputs) -> Embedded:
        texts = inputs if are_texts(inputs) else decode_token_arrays(inputs, MODEL_NAME)
        model = self._embedder.model()
        pieces = model.word_pieces(texts)
        return Embedded(model.encode_pieces(pieces), sum(len(ids) + 2 for ids in pieces))


class RemoteEmbeddingModel:
    """An OpenAI-compatible embeddings backend, the client's request passed on to it."""

    def __init__(self, embedder: OpenAICompatibleEmbedder, owned_by: str) -> None:
        self._embedder = embedder
        self._info = EmbeddingModelInfo(embedder.model, owned_by)

    @property
    def info(self) -> EmbeddingModelInfo:
        return self._info

    async def embed(
        self, inputs: Inputs, *, dimensions: int | None = None, user: str | None = None
    ) -> Embedded:
        vectors, tokens = await self._embedder.create(inputs, dimensions=dimensions, user=user)
        return Embedded(vectors, _estimated(inputs) if tokens is None else tokens)

    async def aclose(self) -> None:
        await self._embedder.aclose()


def _estimated(inputs: Inputs) -> int:
    """Tokens of ``inputs`` when the backend does not count them: token arrays by their
    length, texts at four characters a token."""
    if are_texts(inputs):
        return sum(math.ceil(len(text) / _CHARS_PER_TOKEN) for text in inputs)
    return sum(len(ids) for ids in inputs)


def build_embedding_models(
    settings: EmbeddingSettings, providers: Mapping[str, str | None]
) -> list[EmbeddingModel]:
    """The models to serve; ``providers``: each configured provider's base URL by name (the
    owner of a remote embeddings backend at one of them). The configured backend comes first,
    so it answers to a name both have."""
    models: list[EmbeddingModel] = []
    if settings.type == "openai_compatible":
        embedder = OpenAICompatibleEmbedder(settings)
        models.append(RemoteEmbeddingModel(embedder, _owner(settings.base_url or "", providers)))
    try:
        models.append(EmbeddedMiniLM(MiniLMEmbedder(settings)))
    except ConfigError as exc:
        log.info("all-MiniLM-L6-v2 is not served on /v1/embeddings: %s", exc)
    return models


def _owner(base_url: str, providers: Mapping[str, str | None]) -> str:
    """The provider configured at ``base_url``, else the URL's host."""
    wanted = base_url.rstrip("/")
    for name, url in providers.items():
        if url is not None and url.rstrip("/") == wanted:
            return name
    return urlsplit(base_url).hostname or base_url
