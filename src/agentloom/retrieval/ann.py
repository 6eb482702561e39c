"""``ApproximateIndex``: a ``ChunkIndex`` that finds its vector side's rows through an HNSW graph
once it holds ``threshold`` chunks (approximate nearest neighbours, ANN).

Below the threshold it is the ``ChunkIndex`` alone: every search exact, results identical.
From it on, the index keeps a graph (``agentloom.retrieval.graph``) of its rows, and the vector
side of a vector or hybrid search is:

1. the graph's ``max(2 * count, CANDIDATES)`` nearest rows, plus any row not yet in the graph
   (rows added since the builder last caught up, scored exactly);
2. those of them the ``files`` filter allows, rescored exactly with the index's float32
   vectors; the best ``count`` are the side's answer, scored like exact search.

The keyword side, fusion and hits are the ``ChunkIndex``'s. A filter that allows fewer rows than
the threshold is searched exactly over those rows (no graph). A wider one asks the graph for
more rows, in proportion to the share of rows it allows (at most ``MAX_CANDIDATES``), and falls
back to exact search over the allowed rows when fewer than ``count`` of them come back.

The graph follows the index in the background (``agentloom.retrieval.graph_builder``, which also
writes down why this is thread-safe): ``add`` returns once the exact index holds the new rows,
and a builder thread adds them to the graph a slice at a time; ``remove_files`` removes their
rows from it (usearch keeps them as tombstones, never returned). A first graph serves once it
holds every row: until then searches are exact. It is dropped when the index shrinks below half
the threshold, and rebuilt (the old one serving meanwhile) when it holds more tombstones than
rows. Hits only ever come from the snapshot a search reads, so a removed chunk is never
returned, whatever a graph still holds. ``wait_ready`` waits for the builder.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from functools import partial

import numpy as np
from numpy.typing import NDArray

from agentloom.retrieval.graph import Graph
from agentloom.retrieval.graph_builder import GraphBuilder
from agentloom.retrieval.index import MIN_CANDIDATES, ChunkIndex, IndexedChunk
from agentloom.retrieval.query import DEFAULT_WEIGHTS, Hit, Query, Ranked, SearchMode, Weights

__all__ = ["ANN_THRESHOLD", "ApproximateIndex"]

ANN_THRESHOLD = 50_000  # chunks from which the graph is used (VectorStoreSettings.ann_threshold)
CANDIDATES = 40  # rows asked of the graph, at least, for the vector side's best 10
MAX_CANDIDATES = 2_000  # rows asked of the graph, at most, for a narrow filter


class ApproximateIndex:
    """``background=False``: no builder thread; the graph is only built by ``build`` (for
    tests that want each step under their control)."""

    def __init__(
        self, dimensions: int, *, threshold: int = ANN_THRESHOLD, background: bool = True
    ) -> None:
        if threshold < 1:
            raise ValueError(f"the ANN threshold must be positive, got {threshold}")
        self._exact = ChunkIndex(dimensions)
        self._builder = GraphBuilder(self._exact, threshold, background=background)

    @property
    def dimensions(self) -> int:
        return self._exact.dimensions

    @property
    def threshold(self) -> int:
        return self._builder.threshold

    def __len__(self) -> int:
        return len(self._exact)

    @property
    def approximate(self) -> bool:
        """Whether searches go through a graph (past the threshold, once it is built)."""
        return self._builder.serving is not None

    @property
    def building(self) -> bool:
        """Whether a builder thread runs: a graph being built, extended or pruned."""
        return self._builder.building

    @property
    def error(self) -> Exception | None:
        """Why building the graph failed (logged; searches are exact since), if it did."""
        return self._builder.error

    @property
    def nbytes(self) -> int:
        """Bytes held by the exact index's arrays and the graphs."""
        return self._exact.nbytes + self._builder.nbytes

    @property
    def exact(self) -> ChunkIndex:
        """The exact index it holds (the same chunks, every search exact)."""
        return self._exact

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until the builder has caught up: the graph, if the index has one, holds every
        row and serves. False if ``timeout`` seconds passed first."""
        return self._builder.wait(timeout)

    def build(self, steps: int | None = None) -> bool:
        """Run at most ``steps`` of the builder's steps (a slice of rows each) in this thread,
        for an index made with ``background=False``; True when no work is left."""
        return self._builder.run(steps)

    # --- writing ---------------------------------------------------------------------------

    def add(self, chunks: Sequence[IndexedChunk]) -> None:
        """Add chunks; searches see them at once (exactly, until the graph holds them)."""
        self._exact.add(chunks)
        self._builder.added()

    def remove_files(self, file_ids: Collection[str]) -> int:
        """Drop every chunk of ``file_ids``; returns how many were dropped."""
        serials = self._exact.serials_of(file_ids)
        gone = self._exact.remove_files(file_ids)
        if gone:
            self._builder.removed(serials)
        return gone

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
        graph = self._builder.serving
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
