"""The inverted index of one segment: for each term, the rows holding it and how often.

Stored compressed-sparse-row style: the distinct terms (sorted), where each term's postings start,
then one (row, count) pair per posting, rows ascending within a term. Six bytes a posting.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from agentloom.frozen import frozen

__all__ = ["Postings"]

_MAX_COUNT = np.iinfo(np.uint16).max


@frozen
class Postings:
    terms: NDArray[np.int32]  # distinct term ids, ascending
    starts: NDArray[np.int64]  # len(terms) + 1 offsets into rows/counts
    rows: NDArray[np.int32]
    counts: NDArray[np.uint16]  # occurrences of the term in the row (capped at 65535)

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def nbytes(self) -> int:
        return self.terms.nbytes + self.starts.nbytes + self.rows.nbytes + self.counts.nbytes

    def of(self, term: int) -> tuple[NDArray[np.int32], NDArray[np.uint16]]:
        """The rows holding ``term`` and how often they hold it."""
        at = int(np.searchsorted(self.terms, np.int32(term)))  # np.int32: no int64 copy of terms
        if at == len(self.terms) or self.terms[at] != term:
            return self.rows[:0], self.counts[:0]
        lo, hi = self.starts[at], self.starts[at + 1]
        return self.rows[lo:hi], self.counts[lo:hi]

    def document_frequencies(self, vocabulary_size: int) -> NDArray[np.int64]:
        """How many rows hold each term id below ``vocabulary_size``."""
        frequencies = np.zeros(vocabulary_size, dtype=np.int64)
        frequencies[self.terms] = np.diff(self.starts)
        return frequencies

    @classmethod
    def build(cls, term_ids: NDArray[np.int32], lengths: NDArray[np.int64]) -> Postings:
        """From the term ids of every row, concatenated, and the number of terms of each row."""
        count = max(len(lengths), 1)
        rows = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
        keys, counts = np.unique(term_ids.astype(np.int64) * count + rows, return_counts=True)
        return _compressed(keys // count, keys % count, counts)

    def merged(self, other: Postings, shift: int) -> Postings:
        """These postings then ``other``'s, whose rows come ``shift`` rows later."""
        terms = np.concatenate([self._expanded(), other._expanded()])
        order = np.argsort(terms, kind="stable")  # rows stay ascending within a term
        rows = np.concatenate([self.rows, other.rows + np.int32(shift)])
        counts = np.concatenate([self.counts, other.counts])
        return _compressed(terms[order], rows[order], counts[order])

    def kept(self, keep: NDArray[np.bool_]) -> Postings:
        """The postings of the rows where ``keep`` is true, rows renumbered."""
        renumber = np.cumsum(keep) - 1
        live = keep[self.rows]
        return _compressed(self._expanded()[live], renumber[self.rows[live]], self.counts[live])

    def _expanded(self) -> NDArray[np.int32]:
        """The term of every posting."""
        return np.repeat(self.terms, np.diff(self.starts))


def _compressed(
    terms: NDArray[np.integer], rows: NDArray[np.integer], counts: NDArray[np.integer]
) -> Postings:
    """From one (term, row, count) triple per posting, sorted by term then row."""
    distinct, firsts = np.unique(terms, return_index=True)
    starts = np.append(firsts, len(terms)).astype(np.int64)
    return Postings(
        distinct.astype(np.int32),
        starts,
        rows.astype(np.int32),
        np.minimum(counts, _MAX_COUNT).astype(np.uint16),
    )
