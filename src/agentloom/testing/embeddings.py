"""Deterministic fake embeddings, as the fake backend serves them on ``POST /v1/embeddings``.

A text's vector is a hashed bag of its lower-cased words: each word adds +1 or -1 (by its
CRC-32) to one of ``dimensions`` buckets, and the sum is L2-normalised. Texts that share words
point the same way; texts that share none are close to orthogonal.
"""

from __future__ import annotations

import base64
import re
import zlib
from collections.abc import Mapping
from typing import Final

import numpy as np
from numpy.typing import NDArray

__all__ = ["DEFAULT_DIMENSIONS", "embeddings_answer", "hashed_embedding"]

DEFAULT_DIMENSIONS: Final = 64
_WORD: Final = re.compile(r"\w+")


def hashed_embedding(text: str, dimensions: int = DEFAULT_DIMENSIONS) -> NDArray[np.float32]:
    """The fake embedding of ``text``: unit length, ``dimensions`` float32 values."""
    vector = np.zeros(dimensions, dtype=np.float64)
    for word in _WORD.findall(text.lower()) or [""]:  # a text without words still has a vector
        code = zlib.crc32(word.encode())
        vector[code % dimensions] += 1.0 if (code // dimensions) % 2 == 0 else -1.0
    norm = float(np.linalg.norm(vector))
    if norm == 0:  # words that cancel out
        vector[0] = norm = 1.0
    return (vector / norm).astype(np.float32)


def embeddings_answer(body: Mapping[str, object]) -> dict[str, object]:
    """OpenAI's answer to an embeddings request body; ValueError names what is wrong with it."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise ValueError("`model` must be a non-empty string")
    texts = _inputs(body.get("input"))
    dimensions = _dimensions(body.get("dimensions"))
    encoding = body.get("encoding_format", "float")
    if encoding not in ("float", "base64"):
        raise ValueError("`encoding_format` must be 'float' or 'base64'")
    data = [
        {"object": "embedding", "index": i, "embedding": _encode(text, dimensions, encoding)}
        for i, text in enumerate(texts)
    ]
    tokens = sum(len(_WORD.findall(text)) for text in texts)
    usage = {"prompt_tokens": tokens, "total_tokens": tokens}
    return {"object": "list", "data": data, "model": model, "usage": usage}


def _inputs(value: object) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise ValueError("`input` must be a string or a non-empty array of strings")
    if not all(isinstance(text, str) and text for text in value):
        raise ValueError("`input` must contain non-empty strings only")
    return list(value)


def _dimensions(value: object) -> int:
    if value is None:
        return DEFAULT_DIMENSIONS
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError("`dimensions` must be a positive integer")
    return value


def _encode(text: str, dimensions: int, encoding: object) -> list[float] | str:
    vector = hashed_embedding(text, dimensions)
    if encoding == "base64":
        return base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
    return [float(v) for v in vector]
