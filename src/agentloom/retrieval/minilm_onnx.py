"""all-MiniLM-L6-v2 on ONNX Runtime: the default runtime when onnxruntime is installed.

The model is the graph :mod:`.minilm_graph` builds from the installed weights, converted on
first use and cached by :mod:`.minilm_convert`. The session runs one thread per call:
:class:`~agentloom.retrieval.minilm.MiniLM` runs a call per core at once (one session shared,
``run`` is thread-safe), which measured faster than one call on onnxruntime's own threads on
2 cores.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Final

import numpy as np
import onnxruntime as ort  # type: ignore[import-untyped]
from numpy.typing import NDArray

from agentloom.retrieval.minilm_convert import (
    Precision,
    default_cache_directory,
    model_file,
    writable,
)
from agentloom.retrieval.wordpieces import padded

__all__ = ["BATCH_TOKENS", "OnnxForward", "load_onnx"]

BATCH_TOKENS: Final = 1024  # padded tokens per run (measured best on 2 cores)


class OnnxForward:
    """An onnxruntime session of the model and a forward pass over a batch of windows."""

    batch_tokens = BATCH_TOKENS

    def __init__(self, path: Path, precision: Precision) -> None:
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.enable_mem_pattern = False  # shapes change every batch: it only held memory
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.name = f"onnxruntime {ort.__version__} {precision}"

    def running(self) -> AbstractContextManager[object]:
        return contextlib.nullcontext()

    def __call__(self, windows: Sequence[list[int]]) -> NDArray[np.float32]:
        ids, mask = padded(windows)
        (vectors,) = self._session.run(["embeddings"], {"input_ids": ids, "attention_mask": mask})
        result: NDArray[np.float32] = vectors
        return result


def load_onnx(directory: Path, precision: Precision, cache: Path | None) -> OnnxForward:
    """A session of the model in ``directory``, converted (and cached) when needed."""
    with writable(cache or default_cache_directory()) as folder:
        return OnnxForward(
            model_file(directory / "model.safetensors", precision, folder), precision
        )
