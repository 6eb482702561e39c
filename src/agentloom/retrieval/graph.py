"""An HNSW graph over a ``ChunkIndex``'s rows, keyed by their serials (usearch).

The graph finds candidates; their order and scores are computed again exactly from the index's
float32 vectors (``agentloom.retrieval.ann``), so the graph keeps its vectors small: 8-bit
integers (a quarter of float32), cosine metric. Measured on the synthetic chunks of
``bench/retrieval.py`` (384 dimensions, queries one sentence, chunks the mean of 3-5): at
100,000 chunks 8-bit vectors built twice as fast as float32 ones, with the same recall after
rescoring; at 1,000,000 chunks recall@10 was 0.95 with ef 128 and 0.98 with ef 256 (about 2
and 4 ms a search), 0.94 at most with M 12 and efConstruction 32. Queries unlike the chunks
(a sentence against the mean of several) are the hard case for HNSW: hence the wide ef.
Rows are added on every core (``threads=0``); a graph built so leaves a few rows hard to reach
(measured with usearch alone, 600 to 3,000 rows of 64 dimensions: 0.1-0.4% of rows missing from
the 40 nearest of their own vector, none when added on one thread, which builds about half as
fast): part of the recall above.

One thread writes a graph (``add``, ``remove``: the builder, ``agentloom.retrieval.graph_builder``)
while any thread may search it. usearch may grow its storage while adding, which is unsafe while
another thread searches; every call into it holds one lock. Additions run a slice at a time
(``SLICE``), so a search waits at most for one slice. ``upto`` tells which serials the graph
covers: every row with a serial below it was added; rows from it on are the caller's to search
exactly.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from usearch.index import Index

__all__ = ["Graph"]

CONNECTIVITY = 16  # links per node and layer (HNSW's M)
EXPANSION_ADD = 48  # candidates kept while linking a new node (efConstruction)
EXPANSION_SEARCH = 256  # candidates kept while searching (ef); usearch keeps more if asked more
SLICE = 512  # vectors added per hold of the lock


class Graph:
    def __init__(self, dimensions: int) -> None:
        from usearch.index import Index  # 0.3 s to import: only stores past the threshold pay

        self._index: Index = Index(
            ndim=dimensions,
            metric="cos",
            dtype="i8",
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
            expansion_search=EXPANSION_SEARCH,
        )
        self._lock = threading.Lock()
        self.upto = 0
        self.live = 0  # vectors searchable
        self.removed = 0  # vectors removed since the graph was built (kept as tombstones)

    @property
    def nbytes(self) -> int:
        with self._lock:
            return int(self._index.memory_usage)

    def add(self, serials: NDArray[np.int64], vectors: NDArray[np.float32]) -> None:
        """Add rows (serials increasing, all from ``upto`` on)."""
        for at in range(0, len(serials), SLICE):
            keys = serials[at : at + SLICE]
            with self._lock:
                self._index.add(keys.astype(np.uint64), vectors[at : at + SLICE], threads=0)
                self.upto = int(keys[-1]) + 1
                self.live += len(keys)

    def remove(self, serials: NDArray[np.int64]) -> None:
        added = serials[serials < self.upto]
        if not len(added):
            return
        with self._lock:
            gone = int(self._index.remove(added.astype(np.uint64)))
        self.live -= gone
        self.removed += gone

    def nearest(self, vector: NDArray[np.float32], count: int) -> tuple[NDArray[np.int64], int]:
        """The serials of (about) the ``count`` rows nearest ``vector``, and ``upto`` as it was
        when they were found."""
        with self._lock:
            found = self._index.search(vector, count, threads=1)
            upto = self.upto
        keys = np.asarray(found.keys, dtype=np.int64)
        return keys, upto
