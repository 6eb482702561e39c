"""``ChunkIndex``: one vector store's chunks in memory, searched by vector, keyword or both.

Rows live in immutable segments (``agentloom.retrieval.segment``); ``add`` appends a segment and
compacts, then publishes the new segment list with one assignment, so searches running meanwhile
keep reading the list they started with. Calls to ``add``/``remove_files`` must not overlap each
other (the caller serialises them); searches may run at any time, from any thread.

Scores, all in 0..1, higher is better:

- ``vector``: the cosine similarity of the query vector and the chunk's, clipped at 0.
- ``keyword``: BM25 divided by the query's BM25 ceiling (``agentloom.retrieval.bm25``).
- ``hybrid``: weighted reciprocal rank fusion (``agentloom.retrieval.fusion``) of the best
  ``max(limit, 10)`` rows of each side (``candidates``); 1.0 for a row ranked first by both.
  The window is what the two sides would each return alone: on the labelled corpus of
  ``bench/retrieval.py`` a deeper one (50 rows) let weak keyword matches outvote the vector
  side's best row, and hybrid fell below vector search (recall@5 0.96 against 0.99).
  A row only one side ranks scores at most that side's share of the weights (0.5 with equal
  weights): with no query vector, or no keyword match, hybrid scores stay at or below it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from agentloom.retrieval import bm25
from agentloom.retrieval.fusion import Ranking, fuse, top
from agentloom.retrieval.keywords import normalise, terms, words
from agentloom.retrieval.postings import Postings
from agentloom.retrieval.segment import Segment, compact

__all__ = ["ChunkIndex", "Hit", "IndexedChunk", "SearchMode", "Weights"]

SearchMode = Literal["hybrid", "vector", "keyword"]
_Ranked = tuple[NDArray[np.intp], NDArray[np.float64]]  # rows, best first, and their scores
MIN_CANDIDATES = 10


@dataclass(frozen=True, slots=True)
class IndexedChunk:
    chunk_id: int
    file_id: str
    text: str
    vector: NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class Weights:
    """How much each side counts in hybrid search (``ranking_options.hybrid_search``)."""

    embedding: float = 1.0
    text: float = 1.0

    def __post_init__(self) -> None:
        if not (self.embedding >= 0 and self.text >= 0) or self.embedding + self.text <= 0:
            raise ValueError("hybrid search weights must be >= 0 and not both 0")


@dataclass(frozen=True, slots=True)
class Hit:
    chunk_id: int
    file_id: str
    score: float


@dataclass(frozen=True, slots=True)
class _Snapshot:
    segments: tuple[Segment, ...]
    stats: bm25.CorpusStats
    offsets: NDArray[np.int64] = field(init=False)

    def __post_init__(self) -> None:
        sizes = [len(s) for s in self.segments]
        object.__setattr__(self, "offsets", np.cumsum([0, *sizes[:-1]], dtype=np.int64))


def _stats(segments: Sequence[Segment], vocabulary_size: int) -> bm25.CorpusStats:
    frequencies = np.zeros(vocabulary_size, dtype=np.int64)
    for segment in segments:
        frequencies += segment.postings.document_frequencies(vocabulary_size)
    return bm25.CorpusStats(
        documents=sum(len(s) for s in segments),
        total_length=float(sum(s.lengths.sum(dtype=np.float64) for s in segments)),
        frequencies=frequencies,
    )


class ChunkIndex:
    def __init__(self, dimensions: int) -> None:
        if dimensions < 1:
            raise ValueError(f"dimensions must be positive, got {dimensions}")
        self.dimensions = dimensions
        self._files: list[str] = []
        self._file_positions: dict[str, int] = {}
        self._vocabulary: dict[str, int] = {}  # term -> term id
        self._word_terms: dict[str, tuple[int, ...]] = {}  # word (see keywords.words) -> term ids
        self._snapshot = _Snapshot((), _stats((), 0))

    def __len__(self) -> int:
        return self._snapshot.stats.documents

    @property
    def segment_sizes(self) -> tuple[int, ...]:
        """Rows per segment, oldest first."""
        return tuple(len(s) for s in self._snapshot.segments)

    @property
    def nbytes(self) -> int:
        """Bytes held by the index's arrays (vectors, postings, statistics)."""
        snapshot = self._snapshot
        return snapshot.stats.frequencies.nbytes + sum(s.nbytes for s in snapshot.segments)

    # --- writing ---------------------------------------------------------------------------

    def add(self, chunks: Sequence[IndexedChunk]) -> None:
        if not chunks:
            return
        segment = self._segment(chunks)
        old = self._snapshot
        size = len(self._vocabulary)
        frequencies = np.zeros(size, dtype=np.int64)
        frequencies[: len(old.stats.frequencies)] = old.stats.frequencies
        frequencies += segment.postings.document_frequencies(size)
        stats = bm25.CorpusStats(
            documents=old.stats.documents + len(segment),
            total_length=old.stats.total_length + float(segment.lengths.sum(dtype=np.float64)),
            frequencies=frequencies,
        )
        self._snapshot = _Snapshot(compact([*old.segments, segment]), stats)

    def remove_files(self, file_ids: Collection[str]) -> int:
        """Drop every chunk of ``file_ids``; returns how many were dropped."""
        gone = self._file_mask(file_ids)
        if gone is None:
            return 0
        segments: list[Segment] = []
        for segment in self._snapshot.segments:
            keep = ~gone[segment.files]
            if keep.all():
                segments.append(segment)
            elif keep.any():
                segments.append(segment.kept(keep))
        before = len(self)
        self._snapshot = _Snapshot(tuple(segments), _stats(segments, len(self._vocabulary)))
        return before - len(self)

    def _segment(self, chunks: Sequence[IndexedChunk]) -> Segment:
        vectors = np.array([c.vector for c in chunks], dtype=np.float32)
        if vectors.shape != (len(chunks), self.dimensions):
            raise ValueError(
                f"chunk vectors must have {self.dimensions} dimensions, got shape {vectors.shape}"
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors /= np.where(norms > 0, norms, 1.0)
        files = [self._file_position(c.file_id) for c in chunks]
        term_ids, lengths = self._term_ids(chunks)
        return Segment(
            vectors,
            np.array([c.chunk_id for c in chunks], dtype=np.int64),
            np.array(files, dtype=np.int32),
            lengths.astype(np.float32),
            Postings.build(term_ids, lengths),
        )

    def _file_position(self, file_id: str) -> int:
        at = self._file_positions.get(file_id)
        if at is None:
            at = len(self._files)
            self._files.append(file_id)  # before the mapping: a search that sees one sees both
            self._file_positions[file_id] = at
        return at

    def _term_ids(
        self, chunks: Sequence[IndexedChunk]
    ) -> tuple[NDArray[np.int32], NDArray[np.int64]]:
        """The term ids of every chunk, concatenated, and how many each chunk has."""
        known = self._word_terms.get
        ids: list[int] = []
        lengths = np.empty(len(chunks), dtype=np.int64)
        for i, chunk in enumerate(chunks):
            before = len(ids)
            for word in words(chunk.text):
                ids += known(word) or self._learn(word)
            lengths[i] = len(ids) - before
        return np.array(ids, dtype=np.int32), lengths

    def _learn(self, word: str) -> tuple[int, ...]:
        vocabulary = self._vocabulary
        found = tuple(vocabulary.setdefault(t, len(vocabulary)) for t in normalise(word))
        self._word_terms[word] = found
        return found

    # --- searching -------------------------------------------------------------------------

    def search(
        self,
        vector: NDArray[np.float32] | None,
        text: str,
        *,
        limit: int,
        mode: SearchMode = "hybrid",
        files: Collection[str] | None = None,
        weights: Weights = Weights(),
        candidates: int | None = None,
    ) -> list[Hit]:
        """The best ``limit`` chunks for the query. ``files``: only chunks of these file ids
        (None: all). ``candidates``: rows hybrid search fuses from each side (at least
        ``limit``; default ``max(limit, 10)``)."""
        if mode == "vector" and vector is None:
            raise ValueError("vector search needs a query vector")
        snapshot = self._snapshot
        allowed = None if files is None else self._file_mask(files)
        if limit <= 0 or not len(snapshot.segments) or (files is not None and allowed is None):
            return []
        query = _Query(snapshot, self._query_vector(vector), self._query_terms(text), allowed)
        if mode == "vector":
            rows, scores = query.vector_top(limit)
        elif mode == "keyword":
            rows, scores = query.keyword_top(limit)
        else:
            depth = max(limit, candidates or MIN_CANDIDATES)
            rows, scores = query.hybrid_top(limit, depth, weights)
        return self._hits(snapshot, rows, scores)

    def _query_vector(self, vector: NDArray[np.float32] | None) -> NDArray[np.float32] | None:
        if vector is None:
            return None
        flat = np.asarray(vector, dtype=np.float32).reshape(-1)
        if flat.shape != (self.dimensions,):
            raise ValueError(
                f"the query vector must have {self.dimensions} dimensions, got {flat.shape[0]}"
            )
        norm = float(np.linalg.norm(flat))
        return flat / norm if norm > 0 else flat

    def _query_terms(self, text: str) -> list[int | None]:
        return [self._vocabulary.get(t) for t in dict.fromkeys(terms(text))]

    def _file_mask(self, file_ids: Collection[str]) -> NDArray[np.bool_] | None:
        """A mask over the index's file list marking ``file_ids``; None when it marks none."""
        positions = [self._file_positions[f] for f in file_ids if f in self._file_positions]
        if not positions:
            return None
        mask = np.zeros(len(self._files), dtype=np.bool_)
        mask[positions] = True
        return mask

    def _hits(
        self, snapshot: _Snapshot, rows: NDArray[np.intp], scores: NDArray[np.float64]
    ) -> list[Hit]:
        where = np.searchsorted(snapshot.offsets, rows, side="right") - 1
        hits = []
        for row, at, score in zip(rows.tolist(), where.tolist(), scores.tolist(), strict=True):
            segment = snapshot.segments[at]
            local = row - int(snapshot.offsets[at])
            file_id = self._files[int(segment.files[local])]
            hits.append(Hit(int(segment.chunk_ids[local]), file_id, min(max(score, 0.0), 1.0)))
        return hits


class _Query:
    """One search over one snapshot: each side's scores, computed when first needed."""

    def __init__(
        self,
        snapshot: _Snapshot,
        vector: NDArray[np.float32] | None,
        query_terms: list[int | None],
        allowed: NDArray[np.bool_] | None,
    ) -> None:
        self.snapshot = snapshot
        self.vector = vector
        self.query_terms = query_terms
        self.rows_allowed = None
        if allowed is not None:
            self.rows_allowed = np.concatenate([allowed[s.files] for s in snapshot.segments])

    def vector_top(self, count: int) -> _Ranked:
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

    def keyword_top(self, count: int) -> _Ranked:
        snapshot = self.snapshot
        scored = bm25.score(
            snapshot.segments, snapshot.offsets.tolist(), snapshot.stats, self.query_terms
        )
        matched = scored.scores > 0
        if self.rows_allowed is not None:
            matched &= self.rows_allowed
        rows = top(scored.scores, count, np.flatnonzero(matched))
        return rows, scored.scores[rows].astype(np.float64) / (scored.ceiling or 1.0)

    def hybrid_top(self, count: int, depth: int, weights: Weights) -> _Ranked:
        vector_rows, _ = self.vector_top(depth)
        keyword_rows, _ = self.keyword_top(depth)
        rankings = [Ranking(vector_rows, weights.embedding), Ranking(keyword_rows, weights.text)]
        return fuse(rankings, count)
