"""The rows of the vector store tables, as the stores read and write them.

JSON columns (``metadata``, ``attributes``, ``chunking_strategy``, ``last_error``,
``expires_after``) travel as their JSON text: the engine owns those shapes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Literal

from agentloom.frozen import frozen
from agentloom.storage.base import Order
from agentloom.tenancy import DEFAULT_PROJECT

FileStatus = Literal["in_progress", "completed", "cancelled", "failed"]
FILE_STATUSES: tuple[FileStatus, ...] = ("in_progress", "completed", "cancelled", "failed")


@frozen
class StoreRow:
    id: str
    created_at: float  # unix seconds
    name: str
    metadata: str  # JSON object
    expires_after: str | None  # JSON of the expiration policy
    expires_at: float | None
    last_active_at: float
    embedder: str  # the name of the embedder that embeds this store's chunks
    dimensions: int
    epoch: int = 0  # grows whenever chunks are deleted


@frozen
class FileCounts:
    in_progress: int = 0
    completed: int = 0
    failed: int = 0
    cancelled: int = 0
    usage_bytes: int = 0  # of the completed files
    chunks: int = 0  # of the files in progress whose text is cut so far
    chunks_embedded: int = 0  # of those, embedded so far

    @property
    def total(self) -> int:
        return self.in_progress + self.completed + self.failed + self.cancelled


@frozen
class StoreState:
    row: StoreRow
    counts: FileCounts


@frozen
class StoreFileRow:
    """A file of a vector store."""

    vector_store_id: str
    file_id: str
    created_at: float
    status: FileStatus
    attributes: str  # JSON object
    chunking_strategy: str  # JSON of the static strategy used
    batch_id: str | None = None
    last_error: str | None = None  # JSON {code, message}
    usage_bytes: int = 0
    chunks_total: int | None = None  # what its text was cut into (unknown until it is cut)
    chunks_embedded: int = 0  # embedded so far


@frozen
class BatchRow:
    id: str
    vector_store_id: str
    created_at: float
    cancelled: bool = False


@frozen
class BatchState:
    row: BatchRow
    counts: FileCounts


@frozen
class Cursor:
    """A page of a list: ``after`` / ``before`` are ids of the listed objects."""

    after: str | None = None
    before: str | None = None
    limit: int = 20
    order: Order = "desc"


@frozen
class StoreChanges:
    """The new values of a store's mutable fields (the engine merges them with the old ones)."""

    name: str
    metadata: str
    expires_after: str | None
    expires_at: float | None


# --- ingestion and search ----------------------------------------------------------------------


@frozen
class Claim:
    """A file this instance claimed for ingestion."""

    vector_store_id: str
    file_id: str
    chunking_strategy: str  # JSON
    attempts: int  # claims so far, this one included
    project_id: str = DEFAULT_PROJECT  # the store's: ingestion acts as that project


@frozen
class NewChunk:
    position: int
    text: str
    vector: bytes  # float32, little-endian


# A file's new chunks in order, a batch at a time, so that a large file is written without all
# of its chunks in memory at once. Each call starts again from the first chunk (a write that is
# retried reads them again).
ChunkBatches = Callable[[], Iterator[Sequence[NewChunk]]]


@frozen
class IndexState:
    """What an in-memory index of the store must match: its epoch and its newest chunk."""

    store: StoreRow
    max_seq: int  # 0 when the store has no chunk


@frozen
class StoredChunks:
    seqs: list[int]
    file_ids: list[str]
    texts: list[str]
    vectors: list[bytes]


@frozen
class ChunkText:
    """A chunk found by a search, with what the result shows of its file."""

    seq: int
    file_id: str
    text: str
    attributes: str  # JSON object
    filename: str
