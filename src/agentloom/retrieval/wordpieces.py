"""MiniLM's input: WordPiece tokens of texts, cut into the model's windows, batched by length.

The model reads at most 256 tokens ([CLS] + 254 word pieces + [SEP]). A longer text is cut into
overlapping windows of 254 word pieces (a new window every 192); each window is embedded and the
text's vector is the re-normalised mean of its windows, so every part of a long chunk counts.
A text that fits one window gets exactly the reference model's vector.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

import numpy as np
import tokenizers
from numpy.typing import NDArray

__all__ = ["STRIDE", "WINDOW", "Tokenizer", "batches", "padded", "window_starts", "windows"]

WINDOW: Final = 254  # word pieces per window: max_seq_length 256 minus [CLS] and [SEP]
STRIDE: Final = 192  # a new window every STRIDE word pieces (62 overlap)
_CLS: Final = 101
_SEP: Final = 102

I32 = NDArray[np.int32]
I64 = NDArray[np.int64]


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


def windows(pieces: Sequence[list[int]]) -> tuple[I64, list[list[int]]]:
    """Every text's windows with [CLS]/[SEP], and for each window the index of its text."""
    owners: list[int] = []
    found: list[list[int]] = []
    for owner, ids in enumerate(pieces):
        for start in window_starts(len(ids)):
            owners.append(owner)
            found.append([_CLS, *ids[start : start + WINDOW], _SEP])
    return np.asarray(owners, dtype=np.int64), found


def window_starts(count: int) -> list[int]:
    if count <= WINDOW:
        return [0]
    starts = list(range(0, count - WINDOW + 1, STRIDE))
    if starts[-1] + WINDOW < count:
        starts.append(count - WINDOW)  # the last window ends at the last word piece
    return starts


def batches(found: Sequence[list[int]], budget: int) -> Iterator[list[int]]:
    """Window indexes grouped by similar length, at most ``budget`` padded tokens a batch."""
    order = sorted(range(len(found)), key=lambda i: len(found[i]))
    batch: list[int] = []
    for i in order:
        if batch and (len(batch) + 1) * len(found[i]) > budget:
            yield batch
            batch = []
        batch.append(i)
    if batch:
        yield batch


def padded(found: Sequence[list[int]]) -> tuple[I32, I32]:
    """Token ids padded with zeros to the longest window, and the mask of the real tokens."""
    length = max(len(w) for w in found)
    ids = np.zeros((len(found), length), dtype=np.int32)
    mask = np.zeros((len(found), length), dtype=np.int32)
    for row, window in enumerate(found):
        ids[row, : len(window)] = window
        mask[row, : len(window)] = 1
    return ids, mask
