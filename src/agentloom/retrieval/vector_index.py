"""The seam of a vector store's search index: chunks in, hits out.

Two kinds, in :data:`INDEX_KINDS`, each implementing :class:`VectorIndex`; the index cache and
vector search use nothing else:

- ``exact``: :class:`~agentloom.retrieval.index.ChunkIndex`, exact vector scores fused with
  BM25, in memory;
- ``hnsw`` (the default): :class:`~agentloom.retrieval.ann.ApproximateIndex`, the same exact
  index below ``ann_threshold`` chunks, and from there on an HNSW graph finding the vector
  side's candidates, rescored exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from agentloom.frozen import frozen
from agentloom.retrieval.ann import ANN_THRESHOLD, ApproximateIndex
from agentloom.retrieval.index import ChunkIndex, Hit, IndexedChunk, SearchMode, Weights
from agentloom.retrieval.query import DEFAULT_WEIGHTS

__all__ = [
    "DEFAULT_INDEX",
    "DEFAULT_OPTIONS",
    "INDEX_KINDS",
    "IndexOptions",
    "VectorIndex",
    "build_index",
]


class VectorIndex(Protocol):
    @property
    def dimensions(self) -> int:
        """The length of the vectors it holds."""
        ...

    def __len__(self) -> int:
        """How many chunks it holds (what the cache's memory budget counts)."""
        ...

    def add(self, chunks: Sequence[IndexedChunk]) -> None: ...

    def remove_files(self, file_ids: Collection[str]) -> int:
        """Drop the chunks of these files; how many went."""
        ...

    def search(
        self,
        vector: NDArray[np.float32] | None,
        text: str,
        *,
        limit: int,
        mode: SearchMode = "hybrid",
        files: Collection[str] | None = None,
        weights: Weights = DEFAULT_WEIGHTS,
    ) -> list[Hit]: ...


@frozen
class IndexOptions:
    ann_threshold: int = ANN_THRESHOLD  # chunks from which an ``hnsw`` index uses its graph


DEFAULT_OPTIONS = IndexOptions()


def _exact(dimensions: int, options: IndexOptions) -> VectorIndex:
    return ChunkIndex(dimensions)


def _hnsw(dimensions: int, options: IndexOptions) -> VectorIndex:
    return ApproximateIndex(dimensions, threshold=options.ann_threshold)


INDEX_KINDS: dict[str, Callable[[int, IndexOptions], VectorIndex]] = {
    "exact": _exact,
    "hnsw": _hnsw,
}
"""Index kinds by name, each built from the store's vector dimensions and the options."""
DEFAULT_INDEX = "hnsw"


def build_index(
    dimensions: int, kind: str = DEFAULT_INDEX, options: IndexOptions = DEFAULT_OPTIONS
) -> VectorIndex:
    return INDEX_KINDS[kind](dimensions, options)
