"""The seam in front of vector store chunks: what ingestion, the index cache, search and the
Vector Stores API need from chunk storage, as three small protocols.

:class:`~agentloom.storage.vector_chunks.SqlChunkStore` (SQLite and PostgreSQL tables) is the
one implementation today; the services depend on these protocols only, so another (pgvector, an
external vector database) is an implementation beside it, not a rewrite.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from agentloom.storage.vector_stores_base import (
    ChunkBatches,
    ChunkText,
    Claim,
    IndexState,
    StoredChunks,
)


class IngestionQueue(Protocol):
    """Files waiting to be chunked: claimed by the process running the file's job, then
    completed or failed."""

    async def claim(self, store_id: str, file_id: str, instance_id: str) -> Claim | None: ...

    async def progress(self, claim: Claim, instance_id: str, embedded: int, total: int) -> bool:
        """How far the file has got; ``False``: it is no longer this instance's."""
        ...

    async def complete(
        self, claim: Claim, instance_id: str, chunks: ChunkBatches, count: int, usage_bytes: int
    ) -> bool: ...

    async def fail(self, claim: Claim, instance_id: str, last_error: str) -> bool: ...


class ChunkReader(Protocol):
    """A store's chunks, read to build and refresh its search index and to show hits."""

    async def index_state(self, store_id: str) -> IndexState | None: ...

    async def chunks(self, store_id: str, *, after: int, upto: int, limit: int) -> StoredChunks: ...

    async def first_seqs(self, store_id: str) -> dict[str, int]: ...

    async def attributes(self, store_id: str) -> list[tuple[str, str]]: ...

    async def texts(self, store_id: str, seqs: Sequence[int]) -> list[ChunkText]: ...


class ChunkRemover(Protocol):
    """Chunks leaving with their file."""

    async def remove_file(self, store_id: str, file_id: str) -> bool: ...

    async def remove_file_everywhere(self, file_id: str) -> list[str]: ...


class ChunkStore(IngestionQueue, ChunkReader, ChunkRemover, Protocol):
    """All three: what one storage backend of chunks provides."""
