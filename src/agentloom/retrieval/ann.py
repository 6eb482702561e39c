"""``ApproximateIndex``: a ``ChunkIndex`` that finds its vector side's rows through an HNSW graph
once it holds ``threshold`` chunks (approximate nearest neighbours, ANN).

Below the threshold it is the ``ChunkIndex`` alone: every search exact, results identical.
From it on, the index keeps a graph (``agentloom.retrieval.graph``) of its rows, and the vector
side of a vector or hybrid search is:

1. the graph's ``max(2 * count, CANDIDATES)`` nearest rows, plus any row not yet in the graph
   (rows being added; they are few and scored exactly);
2. those of them the ``files`` filter allows, rescored exactly with the index's float32
   vectors; the best ``count`` are the side's answer, scored like exact search.

The keyword side, fusion and hits are the ``ChunkIndex``'s. A filter that allows fewer rows than
the threshold is searched exactly over those rows (no graph). A wider one asks the graph for
more rows, in proportion to the share of rows it allows (at most ``MAX_CANDIDATES``), and falls
back to exact search over the allowed rows when fewer than ``count`` of them come back.

The graph follows the index: ``add`` adds the new rows to it, ``remove_files`` removes their rows
from it (usearch keeps them as tombstones, never returned). It is dropped when the index shrinks
below half the threshold, and rebuilt when it holds more tombstones than rows. Hits only ever
come from the snapshot a search reads, so a removed chunk is never returned, whatever the graph
still holds.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from functools import partial

import numpy as np
from numpy.typing import NDArray

from agentloom.retrieval.graph import Graph
from agentloom.retrieval.index import MIN_CANDIDATES, ChunkIndex, IndexedChunk
from agentloom.retrieval.query import DEFAULT_WEIGHTS, Hit, Query, Ranked, SearchMode, Weights

__all__ = ["ANN_THRESHOLD", "ApproximateIndex"]

ANN_THRESHOLD = 50_000  # chunks from which the graph is used (VectorStoreSettings.ann_threshold)
CANDIDATES = 40  # rows asked of the graph, at least, for the vector side's best 10
MAX_CANDIDATES = 2_000  # rows asked of the graph, at most, for a narrow filter


class ApproximateIndex:
    def __init__(self, dimensions: int, *, threshold: int = ANN_THRESHOLD) -> None:
        if threshold < 1:
            raise ValueError(f"the ANN threshold must be positive, got {threshold}")
        self._exact = ChunkIndex(dimensions)
        self.threshold = threshold
        self._graph: Graph | None = None

    @property
    def dimensions(self) -> int:
        return self._exact.dimensions

    def __len__(self) -> int:
        return len(self._exact)

    @property
    def approximate(self) -> bool:
        """Whether it holds a graph (past the threshold)."""
        return self._graph is not None

    @property
    def nbytes(self) -> int:
        """Bytes held by the exact index's arrays and the graph."""
        graph = self._graph
        return self._exact.nbytes + (graph.nbytes if graph is not None else 0)

    @property
    def exact(self) -> ChunkIndex:
        """The exact index it holds (the same chunks, every search exact)."""
        return self._exact

    # --- writing ---------------------------------------------------------------------------

    def add(self, chunks: Sequence[IndexedChunk]) -> None:
        self._exact.add(chunks)
        self._follow()

    def remove_files(self, file_ids: Collection[str]) -> int:
        """Drop every chunk of ``file_ids``; returns how many were dropped."""
        graph = self._graph
        serials = self._exact.serials_of(file_ids) if graph is not None else None
        gone = self._exact.remove_files(file_ids)
        if graph is not None and serials is not None:
            graph.remove(serials)
        self._follow()
        return gone

    def _follow(self) -> None:
        """Bring the graph up to the index: build, extend, drop or rebuild it."""
        graph, size = self._graph, len(self._exact)
        if graph is not None and size < self.threshold // 2:
            self._graph = None
        elif graph is not None and graph.removed <= graph.live:
            self._fill(graph)
        elif size >= self.threshold:  # searches use the old graph, or none, meanwhile
            fresh = Graph(self.dimensions)
            self._fill(fresh)
            self._graph = fresh

    def _fill(self, graph: Graph) -> None:
        for serials, vectors in self._exact.vectors_from(graph.upto):
            graph.add(serials, vectors)

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
    ) -> list[Hit]:
        graph = self._graph
        if graph is None or vector is None or mode == "keyword":
            return self._exact.search(
                vector, text, limit=limit, mode=mode, files=files, weights=weights
            )
        query = self._exact.query(vector, text, files)
        if query is None or limit <= 0:
            return []
        side = partial(self._nearest, query, graph)
        return query.hits(query.ranked(mode, limit, max(limit, MIN_CANDIDATES), weights, side))

    def _nearest(self, query: Query, graph: Graph, count: int) -> Ranked:
        """The vector side: the best ``count`` allowed rows, found through the graph."""
        if query.vector is None:
            return query.vector_top(count)
        allowed = query.rows_allowed
        rows = query.snapshot.stats.documents
        chosen = rows if allowed is None else int(np.count_nonzero(allowed))
        if chosen < self.threshold:  # a narrow filter (or a store shrinking): exact
            if allowed is None:
                return query.vector_top(count)
            return query.scored(np.flatnonzero(allowed), count)
        want = math.ceil(max(2 * count, CANDIDATES) * rows / chosen)
        serials, upto = graph.nearest(query.vector, min(want, max(MAX_CANDIDATES, 2 * count)))
        snapshot = query.snapshot
        found = np.concatenate([snapshot.rows_of(serials), snapshot.rows_from(upto)])
        if allowed is not None:
            found = found[allowed[found]]
        if len(found) < min(count, chosen):
            return query.vector_top(count)
        return query.scored(np.sort(found), count)
