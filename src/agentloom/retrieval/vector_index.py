"""The seam of a vector store's search index: chunks in, hits out.

:class:`~agentloom.retrieval.index.ChunkIndex` (exact vector scores fused with BM25, in memory)
is the one kind today. An approximate nearest-neighbour index is another entry in
:data:`INDEX_KINDS`, implementing this protocol; the index cache and vector search use
nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from agentloom.retrieval.index import ChunkIndex, Hit, IndexedChunk, SearchMode, Weights

DEFAULT_WEIGHTS = Weights()


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


INDEX_KINDS: dict[str, Callable[[int], VectorIndex]] = {"exact": ChunkIndex}
"""Index kinds by name, each built from the store's vector dimensions."""
DEFAULT_INDEX = "exact"


def build_index(dimensions: int, kind: str = DEFAULT_INDEX) -> VectorIndex:
    return INDEX_KINDS[kind](dimensions)
