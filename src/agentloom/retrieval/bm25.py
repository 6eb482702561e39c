"""BM25 (k1 = 1.2, b = 0.75) over the segments of an index, with corpus-wide statistics.

For a query with distinct terms t and a row d::

    bm25(d) = sum_t idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)  = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

N, df and avgdl count every row of the index, whatever segment holds it. Each term's contribution
is below ``idf(t) * (k1 + 1)``, so ``ceiling`` (the sum of those over the query's terms, unknown
terms included) bounds the score: ``bm25 / ceiling`` is a 0..1 score comparable across queries.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from agentloom.frozen import frozen
from agentloom.retrieval.segment import Segment

__all__ = ["K1", "B", "CorpusStats", "Scored", "score"]

K1 = 1.2
B = 0.75


@frozen
class CorpusStats:
    documents: int
    total_length: float
    frequencies: NDArray[np.int64]  # document frequency per term id

    def idf(self, term: int | None) -> float:
        known = term is not None and term < len(self.frequencies)
        df = int(self.frequencies[term]) if known else 0
        return math.log(1.0 + (self.documents - df + 0.5) / (df + 0.5))


@frozen
class Scored:
    scores: NDArray[np.float32]  # one per row of the index, in index order
    ceiling: float  # no score reaches it; 0 when the query has no terms


def score(
    segments: Sequence[Segment],
    offsets: Sequence[int],
    stats: CorpusStats,
    query: Sequence[int | None],
) -> Scored:
    """BM25 of every row for the distinct ``query`` term ids (None: a term no row holds)."""
    scores = np.zeros(stats.documents, dtype=np.float32)
    if not stats.documents:
        return Scored(scores, 0.0)
    average = stats.total_length / stats.documents
    ceiling = 0.0
    for term in query:
        idf = stats.idf(term)
        ceiling += idf * (K1 + 1)
        if term is None:
            continue
        for segment, offset in zip(segments, offsets, strict=True):
            _accumulate(scores[offset : offset + len(segment)], segment, term, idf, average)
    return Scored(scores, ceiling)


def _accumulate(
    out: NDArray[np.float32], segment: Segment, term: int, idf: float, average: float
) -> None:
    rows, counts = segment.postings.of(term)
    if not len(rows):
        return
    norm = K1 * (1.0 - B + B * segment.lengths[rows] / np.float32(average))
    out[rows] += np.float32(idf * (K1 + 1)) * counts / (counts + norm)
