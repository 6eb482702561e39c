"""One search over one snapshot of a ``ChunkIndex``: each side's ranking, their fusion, the hits.

A :class:`Snapshot` is what an index publishes after each change (its segments and corpus
statistics); a :class:`Query` reads one snapshot only, so it sees a consistent index however
the index changes meanwhile. Rows are numbered across the snapshot's segments, oldest first;
each row also has a serial (``agentloom.retrieval.segment``), which keeps naming the same chunk
from one snapshot to the next and is what an approximate index outside the snapshot keys by.

The vector side is exact by default (every allowed row scored); ``ranked`` takes another
(``VectorSide``), e.g. a graph's candidates rescored exactly (``agentloom.retrieval.ann``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import field
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from agentloom.frozen import frozen
from agentloom.retrieval import bm25
from agentloom.retrieval.fusion import Ranking, fuse, top
from agentloom.retrieval.segment import Segment

__all__ = [
    "DEFAULT_WEIGHTS",
    "Hit",
    "Query",
    "Ranked",
    "SearchMode",
    "Snapshot",
    "VectorSide",
    "Weights",
]

SearchMode = Literal["hybrid", "vector", "keyword"]
Ranked = tuple[NDArray[np.intp], NDArray[np.float64]]  # rows, best first, and their scores
VectorSide = Callable[[int], Ranked]  # the best ``count`` rows by vector, of the allowed ones
_Located = tuple[Segment, NDArray[np.bool_], NDArray[np.intp]]


@frozen
class Weights:
    """How much each side counts in hybrid search (``ranking_options.hybrid_search``)."""

    embedding: float = 1.0
    text: float = 1.0

    def __post_init__(self) -> None:
        if not (self.embedding >= 0 and self.text >= 0) or self.embedding + self.text <= 0:
            raise ValueError("hybrid search weights must be >= 0 and not both 0")


DEFAULT_WEIGHTS = Weights()


@frozen
class Hit:
    chunk_id: int
    file_id: str
    score: float


@frozen
class Snapshot:
    segments: tuple[Segment, ...]
    stats: bm25.CorpusStats
    offsets: NDArray[np.int64] = field(init=False)  # the first row of each segment

    def __post_init__(self) -> None:
        sizes = [len(s) for s in self.segments]
        object.__setattr__(self, "offsets", np.cumsum([0, *sizes[:-1]], dtype=np.int64))

    def located(self, rows: NDArray[np.intp]) -> Iterator[_Located]:
        """For each segment holding some of ``rows``: the segment, which of ``rows`` it holds,
        and their positions in it."""
        where = np.searchsorted(self.offsets, rows, side="right") - 1
        for at, segment in enumerate(self.segments):
            mine = where == at
            if mine.any():
                yield segment, mine, rows[mine] - int(self.offsets[at])

    def rows_of(self, serials: NDArray[np.int64]) -> NDArray[np.intp]:
        """The rows holding these serials, in their order; serials it lacks are left out."""
        rows = np.full(len(serials), -1, dtype=np.intp)
        for segment, offset in zip(self.segments, self.offsets.tolist(), strict=True):
            local = np.searchsorted(segment.serials, serials)
            found = local < len(segment)
            found[found] = segment.serials[local[found]] == serials[found]
            rows[found] = local[found] + offset
        result: NDArray[np.intp] = rows[rows >= 0]
        return result

    def rows_from(self, serial: int) -> NDArray[np.intp]:
        """The rows whose serial is ``serial`` or later (the newest rows)."""
        for segment, offset in zip(self.segments, self.offsets.tolist(), strict=True):
            if len(segment) and segment.serials[-1] >= serial:
                start = offset + int(np.searchsorted(segment.serials, serial))
                return np.arange(start, self.stats.documents, dtype=np.intp)
        return np.empty(0, dtype=np.intp)


class Query:
    """One search over one snapshot: each side's scores, computed when first needed.

    ``allowed`` marks the positions in ``files`` (the index's file list) a hit may come from
    (None: any)."""

    def __init__(
        self,
        snapshot: Snapshot,
        files: Sequence[str],
        vector: NDArray[np.float32] | None,
        query_terms: list[int | None],
        allowed: NDArray[np.bool_] | None,
    ) -> None:
        self.snapshot = snapshot
        self.files = files
        self.vector = vector
        self.query_terms = query_terms
        self.rows_allowed = None
        if allowed is not None:
            self.rows_allowed = np.concatenate([allowed[s.files] for s in snapshot.segments])

    # --- the two sides -----------------------------------------------------------------------

    def vector_top(self, count: int) -> Ranked:
        """The exact vector side: every allowed row scored."""
        if self.vector is None:
            return np.empty(0, dtype=np.intp), np.empty(0)
        scores = np.empty(self.snapshot.stats.documents, dtype=np.float32)
        for segment, offset in zip(self.snapshot.segments, self.snapshot.offsets, strict=True):
            # einsum, not matmul: numpy's own single-threaded loop. OpenBLAS's threads made a
            # search 3x slower (and its p95 erratic) whenever the cores were busy.
            out = scores[offset : offset + len(segment)]
            np.einsum("ij,j->i", segment.vectors, self.vector, out=out)
        candidates = None if self.rows_allowed is None else np.flatnonzero(self.rows_allowed)
        rows = top(scores, count, candidates)
        return rows, np.maximum(scores[rows], 0).astype(np.float64)

    def scored(self, rows: NDArray[np.intp], count: int) -> Ranked:
        """The best ``count`` of ``rows`` (allowed ones, no repeats) by their exact cosine."""
        if self.vector is None or not len(rows):
            return np.empty(0, dtype=np.intp), np.empty(0)
        scores = np.empty(len(rows), dtype=np.float32)
        for segment, mine, local in self.snapshot.located(rows):
            scores[mine] = np.einsum("ij,j->i", segment.vectors[local], self.vector)
        best = top(scores, count)
        return rows[best], np.maximum(scores[best], 0).astype(np.float64)

    def keyword_top(self, count: int) -> Ranked:
        snapshot = self.snapshot
        scored = bm25.score(
            snapshot.segments, snapshot.offsets.tolist(), snapshot.stats, self.query_terms
        )
        matched = scored.scores > 0
        if self.rows_allowed is not None:
            matched &= self.rows_allowed
        rows = top(scored.scores, count, np.flatnonzero(matched))
        return rows, scored.scores[rows].astype(np.float64) / (scored.ceiling or 1.0)

    # --- the answer --------------------------------------------------------------------------

    def ranked(
        self,
        mode: SearchMode,
        limit: int,
        depth: int,
        weights: Weights,
        vector_side: VectorSide | None = None,
    ) -> Ranked:
        """The best ``limit`` rows; hybrid fuses each side's best ``depth``."""
        side = vector_side or self.vector_top
        if mode == "vector":
            return side(limit)
        if mode == "keyword":
            return self.keyword_top(limit)
        rankings = [
            Ranking(side(depth)[0], weights.embedding),
            Ranking(self.keyword_top(depth)[0], weights.text),
        ]
        return fuse(rankings, limit)

    def hits(self, ranked: Ranked) -> list[Hit]:
        rows, scores = ranked
        chunk_ids = np.empty(len(rows), dtype=np.int64)
        files = np.empty(len(rows), dtype=np.int32)
        for segment, mine, local in self.snapshot.located(rows):
            chunk_ids[mine] = segment.chunk_ids[local]
            files[mine] = segment.files[local]
        return [
            Hit(chunk_id, self.files[file], min(max(score, 0.0), 1.0))
            for chunk_id, file, score in zip(
                chunk_ids.tolist(), files.tolist(), scores.tolist(), strict=True
            )
        ]
