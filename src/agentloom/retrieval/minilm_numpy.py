"""all-MiniLM-L6-v2's forward pass in plain numpy: the runtime used without onnxruntime.

It runs the same computation sentence-transformers does for that model, without torch: a
6-layer BERT encoder in float32 -> mean pooling over the real tokens -> L2 normalisation. The
batches run on a thread per core while the BLAS library is held to one thread (numpy's
elementwise work is single-threaded, so this beats BLAS's own threads by about 1.5x on 2 cores).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

from agentloom.frozen import frozen
from agentloom.retrieval.wordpieces import padded

__all__ = ["NumpyForward"]

BATCH_TOKENS: Final = 1024  # padded tokens per forward batch (measured best on 2 cores)
BLOCK: Final = 65536  # floats per block of elementwise work (256 KiB: stays in cache)

_HEADS: Final = 12
_EPS: Final = np.float32(1e-12)
_MASKED: Final = np.float32(-1e9)

F32 = NDArray[np.float32]


# --- weights ---------------------------------------------------------------------------------


@frozen
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


@frozen
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


class NumpyForward:
    """The encoder's weights and its forward pass over a batch of windows."""

    batch_tokens = BATCH_TOKENS
    name = "numpy"

    def __init__(self, weights: Mapping[str, NDArray[np.generic]]) -> None:
        self._words = _f32(weights["embeddings.word_embeddings.weight"])
        # every token has type 0: fold its embedding into the positions once
        positions = weights["embeddings.position_embeddings.weight"]
        self._positions = _f32(positions + weights["embeddings.token_type_embeddings.weight"][0])
        self._norm = _norm(weights, "embeddings.LayerNorm")
        hidden = self._words.shape[1]
        count = 1 + max(int(k.split(".")[2]) for k in weights if k.startswith("encoder.layer."))
        self._layers = [_layer(weights, i, hidden // _HEADS) for i in range(count)]
        self._blas = _SingleThreadedBlas()

    def running(self) -> _SingleThreadedBlas:
        """Held while an ``encode`` runs its batches: BLAS on one thread."""
        return self._blas

    def __call__(self, windows: Sequence[list[int]]) -> F32:
        """Mean-pooled, normalised vectors of windows (token ids with [CLS] and [SEP])."""
        ids, int_mask = padded(windows)
        mask = int_mask.astype(np.float32)
        length = ids.shape[1]
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
