"""Searching vector stores: every store at once, results fused by score.

Each store is searched in its in-memory index (:mod:`agentloom.services.vector_stores.index_cache`),
once per query; a chunk found by several queries keeps its best score. ``filters`` are
evaluated on the attributes of the store's files, giving the set of files the index may
return. The texts of the final hits are read from the database (indexes keep no texts).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from functools import partial

import anyio
import numpy as np
from numpy.typing import NDArray

from agentloom.api.filters import Filter
from agentloom.frozen import frozen
from agentloom.retrieval.filters import matches
from agentloom.retrieval.index import Hit, SearchMode, Weights
from agentloom.retrieval.vector_index import VectorIndex
from agentloom.services.vector_stores.index_cache import IndexCache
from agentloom.storage.chunks_base import ChunkReader
from agentloom.storage.vector_stores_base import IndexState


@frozen
class SearchResult:
    file_id: str
    filename: str
    score: float
    text: str
    attributes: dict[str, str | float | bool]


@frozen
class Search:
    """One search request, the same for every store."""

    queries: Sequence[str]
    vectors: NDArray[np.float32] | None  # one row per query; None for keyword search
    limit: int
    filters: Filter | None = None
    score_threshold: float = 0.0
    mode: SearchMode = "hybrid"
    weights: Weights = Weights()  # frozen: a shared default is safe


class VectorSearch:
    def __init__(self, chunks: ChunkReader, cache: IndexCache) -> None:
        self._chunks = chunks
        self._cache = cache

    async def run(self, states: Sequence[IndexState], search: Search) -> list[SearchResult]:
        """The best ``search.limit`` results over all ``states``' stores, best first."""
        found: list[list[SearchResult]] = [[] for _ in states]

        async def one(at: int, state: IndexState) -> None:
            found[at] = await self._store(state, search)

        async with anyio.create_task_group() as tasks:
            for at, state in enumerate(states):
                tasks.start_soon(one, at, state)
        fused = sorted((r for results in found for r in results), key=lambda r: -r.score)
        return fused[: search.limit]

    async def _store(self, state: IndexState, search: Search) -> list[SearchResult]:
        files = await self._allowed(state.store.id, search.filters)
        if files is not None and not files:
            return []
        index = await self._cache.index(state)
        hits = await anyio.to_thread.run_sync(partial(best_hits, index, search, files))
        return await self._results(state.store.id, hits)

    async def _allowed(self, store_id: str, filters: Filter | None) -> set[str] | None:
        if filters is None:
            return None
        files = await self._chunks.attributes(store_id)
        return {
            file_id for file_id, attributes in files if matches(filters, json.loads(attributes))
        }

    async def _results(self, store_id: str, hits: list[Hit]) -> list[SearchResult]:
        texts = {c.seq: c for c in await self._chunks.texts(store_id, [h.chunk_id for h in hits])}
        return [
            SearchResult(
                file_id=chunk.file_id,
                filename=chunk.filename,
                score=hit.score,
                text=chunk.text,
                attributes=json.loads(chunk.attributes),
            )
            for hit in hits
            if (chunk := texts.get(hit.chunk_id)) is not None
        ]


def best_hits(index: VectorIndex, search: Search, files: Collection[str] | None) -> list[Hit]:
    """Every query's hits in ``index``, each chunk at its best score, above the threshold."""
    best: dict[int, Hit] = {}
    for at, query in enumerate(search.queries):
        vector = None if search.vectors is None else search.vectors[at]
        hits = index.search(
            vector,
            query,
            limit=search.limit,
            mode=search.mode,
            files=files,
            weights=search.weights,
        )
        for hit in hits:
            if hit.chunk_id not in best or best[hit.chunk_id].score < hit.score:
                best[hit.chunk_id] = hit
    kept = [hit for hit in best.values() if hit.score >= search.score_threshold]
    return sorted(kept, key=lambda hit: -hit.score)[: search.limit]
