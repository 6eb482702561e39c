"""The in-memory indexes of vector stores: one :class:`VectorIndex` per store per process.

An index is loaded from the database on the store's first search, then kept current with one
cheap query per search (the store's ``epoch`` and its newest chunk's ``seq``, read by the
caller):

- chunks past the last ``seq`` seen are added. Chunks of one store are committed in ``seq``
  order (their writers lock the store's row), so loading by ``seq`` misses nothing;
- a new ``epoch`` means chunks were deleted (a file detached or deleted, always all of its
  chunks): the files whose first chunk is no longer the one the index holds are dropped from
  the index (one ``GROUP BY`` over the store's chunks), and a file attached again comes back
  with its new chunks, past the last ``seq`` seen.

Memory is bounded by ``max_chunks`` over all stores: the least recently searched indexes are
dropped first (a store larger than the bound alone is still searched, alone in memory).
Searches read an index while it changes (the index publishes snapshots); changes to one index
are serialised by its lock.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

import anyio
import numpy as np

from agentloom.retrieval.index import IndexedChunk
from agentloom.retrieval.vector_index import (
    DEFAULT_INDEX,
    DEFAULT_OPTIONS,
    IndexOptions,
    VectorIndex,
    build_index,
)
from agentloom.storage.chunks_base import ChunkReader
from agentloom.storage.vector_stores_base import IndexState, StoredChunks

LOAD_BATCH = 4096  # chunks read from the database at a time


@dataclass(eq=False)
class _Entry:
    index: VectorIndex
    epoch: int
    seen: int = 0  # the highest chunk seq added
    first_seqs: dict[str, int] = field(default_factory=dict)  # file id -> its first chunk's seq
    lock: anyio.Lock = field(default_factory=anyio.Lock)

    def stale(self, state: IndexState) -> bool:
        return self.epoch < state.store.epoch or self.seen < state.max_seq


class IndexCache:
    def __init__(
        self, chunks: ChunkReader, *, max_chunks: int, options: IndexOptions = DEFAULT_OPTIONS
    ) -> None:
        self._chunks = chunks
        self._max_chunks = max_chunks
        self._options = options
        self._entries: OrderedDict[str, _Entry] = OrderedDict()

    async def index(self, state: IndexState) -> VectorIndex:
        """The store's index, holding its chunks as of ``state``."""
        entry = self._entry(state)
        if entry.stale(state):
            async with entry.lock:
                await self._prune(state, entry)
                await self._load(state, entry)
        self._evict(keep=state.store.id)
        return entry.index

    def forget(self, store_id: str) -> None:
        self._entries.pop(store_id, None)

    def stores(self) -> list[str]:
        """The stores whose indexes are in memory, least recently used first."""
        return list(self._entries)

    @property
    def chunks(self) -> int:
        """Chunks held in memory, all stores."""
        return sum(len(entry.index) for entry in self._entries.values())

    def _entry(self, state: IndexState) -> _Entry:
        store = state.store
        entry = self._entries.get(store.id)
        if entry is None:
            index = build_index(store.dimensions, DEFAULT_INDEX, self._options)
            entry = _Entry(index, store.epoch)
            self._entries[store.id] = entry
        self._entries.move_to_end(store.id)
        return entry

    async def _prune(self, state: IndexState, entry: _Entry) -> None:
        if entry.epoch >= state.store.epoch:
            return
        current = await self._chunks.first_seqs(state.store.id)
        gone = [f for f, seq in entry.first_seqs.items() if current.get(f) != seq]
        if gone:
            await anyio.to_thread.run_sync(entry.index.remove_files, gone)
            for file_id in gone:
                del entry.first_seqs[file_id]
        entry.epoch = state.store.epoch

    async def _load(self, state: IndexState, entry: _Entry) -> None:
        while entry.seen < state.max_seq:
            loaded = await self._chunks.chunks(
                state.store.id, after=entry.seen, upto=state.max_seq, limit=LOAD_BATCH
            )
            if not loaded.seqs:
                entry.seen = state.max_seq
                return
            await anyio.to_thread.run_sync(_add, entry.index, loaded)
            for seq, file_id in zip(loaded.seqs, loaded.file_ids, strict=True):
                entry.first_seqs.setdefault(file_id, seq)
            entry.seen = loaded.seqs[-1]

    def _evict(self, *, keep: str) -> None:
        total = self.chunks
        for store_id in list(self._entries):
            if total <= self._max_chunks:
                return
            if store_id != keep:
                total -= len(self._entries.pop(store_id).index)


def _add(index: VectorIndex, loaded: StoredChunks) -> None:
    dimensions = index.dimensions
    index.add(
        [
            IndexedChunk(seq, file_id, text, np.frombuffer(vector, dtype="<f4", count=dimensions))
            for seq, file_id, text, vector in zip(
                loaded.seqs, loaded.file_ids, loaded.texts, loaded.vectors, strict=True
            )
        ]
    )
