"""Immutable segments of a ``ChunkIndex``: the rows added together, as numpy arrays.

A segment holds, for its rows, the L2-normalised float32 vectors, the chunk ids, the serials (the
order in which the index took the rows: 0, 1, 2, ... over its life, never reused), the position of
each row's file in the index's file list, the keyword length of each row, and their inverted
index (``agentloom.retrieval.postings``).
Segments are merged LSM style (``compact``) so an index built by many small additions keeps few
of them; merging concatenates rows in order, so row order, and with it every score, is the same
however the rows are split into segments.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from agentloom.frozen import frozen
from agentloom.retrieval.postings import Postings

__all__ = ["MAX_SEGMENTS", "Segment", "compact"]

MAX_SEGMENTS = 8
_MERGE_RATIO = 2  # merge the last two segments while the older is at most this many times larger


@frozen
class Segment:
    vectors: NDArray[np.float32]  # (rows, dimensions), rows L2-normalised
    chunk_ids: NDArray[np.int64]
    serials: NDArray[np.int64]  # increasing, within a segment and from one segment to the next
    files: NDArray[np.int32]  # position of each row's file id in the index's file list
    lengths: NDArray[np.float32]  # keyword terms per row
    postings: Postings

    def __len__(self) -> int:
        return len(self.chunk_ids)

    @property
    def nbytes(self) -> int:
        rows = (self.vectors, self.chunk_ids, self.serials, self.files, self.lengths)
        return sum(a.nbytes for a in rows) + self.postings.nbytes

    def merged(self, other: Segment) -> Segment:
        return Segment(
            np.concatenate([self.vectors, other.vectors]),
            np.concatenate([self.chunk_ids, other.chunk_ids]),
            np.concatenate([self.serials, other.serials]),
            np.concatenate([self.files, other.files]),
            np.concatenate([self.lengths, other.lengths]),
            self.postings.merged(other.postings, len(self)),
        )

    def kept(self, keep: NDArray[np.bool_]) -> Segment:
        return Segment(
            self.vectors[keep],
            self.chunk_ids[keep],
            self.serials[keep],
            self.files[keep],
            self.lengths[keep],
            self.postings.kept(keep),
        )


def compact(segments: Sequence[Segment]) -> tuple[Segment, ...]:
    """Merge the newest segments while one is not much smaller than the one before it, or while
    there are more than ``MAX_SEGMENTS``: sizes then shrink geometrically from old to new."""
    out = list(segments)
    while len(out) > 1 and (len(out[-2]) <= _MERGE_RATIO * len(out[-1]) or len(out) > MAX_SEGMENTS):
        newest = out.pop()
        out.append(out.pop().merged(newest))
    return tuple(out)
