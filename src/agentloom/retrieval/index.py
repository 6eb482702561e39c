"""``ChunkIndex``: one vector store's chunks in memory, searched by vector, keyword or both.

Rows live in immutable segments (``agentloom.retrieval.segment``); ``add`` appends a segment and
compacts, then publishes the new segment list with one assignment (a ``Snapshot``), so searches
running meanwhile keep reading the list they started with (``agentloom.retrieval.query``).
Calls to ``add``/``remove_files`` must not overlap each other (the caller serialises them);
searches may run at any time, from any thread.

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

from collections.abc import Collection, Iterator, Sequence

import numpy as np
from numpy.typing import NDArray

from agentloom.frozen import frozen
from agentloom.retrieval import bm25
from agentloom.retrieval.keywords import normalise, terms, words
from agentloom.retrieval.postings import Postings
from agentloom.retrieval.query import DEFAULT_WEIGHTS, Hit, Query, SearchMode, Snapshot, Weights
from agentloom.retrieval.segment import Segment, compact

__all__ = ["ChunkIndex", "Hit", "IndexedChunk", "SearchMode", "Weights"]

MIN_CANDIDATES = 10


@frozen
class IndexedChunk:
    chunk_id: int
    file_id: str
    text: str
    vector: NDArray[np.float32]


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
        self._serials = 0  # rows ever added: the serial of the next one
        self._snapshot = Snapshot((), _stats((), 0))

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
        self._serials += len(segment)
        self._snapshot = Snapshot(compact([*old.segments, segment]), stats)

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
        self._snapshot = Snapshot(tuple(segments), _stats(segments, len(self._vocabulary)))
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
            np.arange(self._serials, self._serials + len(chunks), dtype=np.int64),
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

    # --- reading by serial ------------------------------------------------------------------

    def serials_of(self, file_ids: Collection[str]) -> NDArray[np.int64]:
        """The serials of the rows of these files, increasing."""
        wanted = self._file_mask(file_ids)
        if wanted is None:
            return np.empty(0, dtype=np.int64)
        segments = self._snapshot.segments
        return np.concatenate(
            [np.empty(0, dtype=np.int64)] + [s.serials[wanted[s.files]] for s in segments]
        )

    def vectors_from(self, serial: int) -> Iterator[tuple[NDArray[np.int64], NDArray[np.float32]]]:
        """The serials and (normalised) vectors of the rows from ``serial`` on, a segment at a
        time (views, not copies)."""
        for segment in self._snapshot.segments:
            start = int(np.searchsorted(segment.serials, serial))
            if start < len(segment):
                yield segment.serials[start:], segment.vectors[start:]

    # --- searching -------------------------------------------------------------------------

    def search(
        self,
        vector: NDArray[np.float32] | None,
        text: str,
        *,
        limit: int,
        mode: SearchMode = "hybrid",
        files: Collection[str] | None = None,
        weights: Weights = DEFAULT_WEIGHTS,
        candidates: int | None = None,
    ) -> list[Hit]:
        """The best ``limit`` chunks for the query. ``files``: only chunks of these file ids
        (None: all). ``candidates``: rows hybrid search fuses from each side (at least
        ``limit``; default ``max(limit, 10)``)."""
        if mode == "vector" and vector is None:
            raise ValueError("vector search needs a query vector")
        query = self.query(vector, text, files)
        if query is None or limit <= 0:
            return []
        depth = max(limit, candidates or MIN_CANDIDATES)
        return query.hits(query.ranked(mode, limit, depth, weights))

    def query(
        self,
        vector: NDArray[np.float32] | None,
        text: str,
        files: Collection[str] | None = None,
    ) -> Query | None:
        """A search over the index as it is now; None when nothing can match (an empty index,
        or ``files`` naming none of its files)."""
        snapshot = self._snapshot
        allowed = None if files is None else self._file_mask(files)
        if not len(snapshot.segments) or (files is not None and allowed is None):
            return None
        vector = self._query_vector(vector)
        return Query(snapshot, self._files, vector, self._query_terms(text), allowed)

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
