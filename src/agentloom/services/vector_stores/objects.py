"""Rows of the vector store tables as the API's objects: statuses, counts, expiry."""

from __future__ import annotations

import json

from agentloom.api.vector_stores import (
    BatchStatus,
    ExpiresAfter,
    FileCounts,
    IngestionProgress,
    LastError,
    StaticChunking,
    StaticChunkingObject,
    StoreStatus,
    VectorStore,
    VectorStoreFile,
    VectorStoreFileBatch,
)
from agentloom.storage.vector_stores_base import (
    BatchState,
    StoreFileRow,
    StoreRow,
    StoreState,
)
from agentloom.storage.vector_stores_base import FileCounts as CountsRow

DAY = 86_400.0


def expired(row: StoreRow, now: float) -> bool:
    return row.expires_at is not None and row.expires_at <= now


def expiry(policy: ExpiresAfter | None, last_active_at: float) -> float | None:
    """When a store with ``policy`` expires if last used at ``last_active_at``."""
    return None if policy is None else last_active_at + policy.days * DAY


def policy_of(row: StoreRow) -> ExpiresAfter | None:
    return (
        None if row.expires_after is None else ExpiresAfter.model_validate_json(row.expires_after)
    )


def store_object(state: StoreState, now: float) -> VectorStore:
    row, counts = state.row, state.counts
    status: StoreStatus = "in_progress" if counts.in_progress else "completed"
    if expired(row, now):
        status = "expired"
    return VectorStore(
        id=row.id,
        created_at=int(row.created_at),
        name=row.name,
        usage_bytes=counts.usage_bytes,
        file_counts=file_counts(counts),
        status=status,
        expires_after=policy_of(row),
        expires_at=None if row.expires_at is None else int(row.expires_at),
        last_active_at=int(row.last_active_at),
        metadata=json.loads(row.metadata),
        progress=_store_progress(counts),
    )


def _store_progress(counts: CountsRow) -> IngestionProgress | None:
    """How far the store's files in progress have got, while there are any."""
    if not counts.in_progress:
        return None
    return IngestionProgress(chunks_total=counts.chunks, chunks_embedded=counts.chunks_embedded)


def file_counts(counts: CountsRow) -> FileCounts:
    return FileCounts(
        in_progress=counts.in_progress,
        completed=counts.completed,
        failed=counts.failed,
        cancelled=counts.cancelled,
        total=counts.total,
    )


def file_object(row: StoreFileRow) -> VectorStoreFile:
    return VectorStoreFile(
        id=row.file_id,
        created_at=int(row.created_at),
        vector_store_id=row.vector_store_id,
        status=row.status,
        usage_bytes=row.usage_bytes,
        last_error=None
        if row.last_error is None
        else LastError.model_validate_json(row.last_error),
        attributes=json.loads(row.attributes),
        chunking_strategy=StaticChunkingObject(
            static=StaticChunking.model_validate_json(row.chunking_strategy)
        ),
        progress=_file_progress(row),
    )


def _file_progress(row: StoreFileRow) -> IngestionProgress | None:
    """How far the file's ingestion has got: while in progress (0 of 0 before its text is
    cut), and all of it once completed (files completed before progress was kept say none)."""
    if row.status not in ("in_progress", "completed"):
        return None
    if row.status == "completed" and row.chunks_total is None:
        return None
    total = row.chunks_total or 0
    return IngestionProgress(chunks_total=total, chunks_embedded=row.chunks_embedded)


def batch_object(state: BatchState) -> VectorStoreFileBatch:
    counts = state.counts
    status: BatchStatus = "completed"
    if state.row.cancelled:
        status = "cancelled"
    elif counts.in_progress:
        status = "in_progress"
    elif counts.total and counts.failed == counts.total:
        status = "failed"
    return VectorStoreFileBatch(
        id=state.row.id,
        created_at=int(state.row.created_at),
        vector_store_id=state.row.vector_store_id,
        status=status,
        file_counts=file_counts(counts),
    )
