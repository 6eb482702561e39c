"""Ingestion of vector store files as durable jobs: text, chunks, embeddings, one final write.

Each file waiting to be ingested has a job (kind ``"ingest"``, queued when the file is
attached); the job runner of any server process claims it, at most ``ingestion_concurrency``
at once per process. The job claims the file row for its process, so a file whose process died
is ingested again by the one that takes the job over.

A file's chunks and its ``completed`` status are written in one transaction, and only while the
file is still in progress and claimed by this instance: a file removed, cancelled or taken over
meanwhile gets no chunks. Embedding checks the claim between batches, so a cancelled file stops
early. Memory stays bounded whatever the file's size: the chunks are spans of its text and their
vectors wait in a temporary file (:mod:`.chunk_spool`) until the final transaction inserts them
a batch at a time.

A file that cannot be read fails with ``last_error`` (``unsupported_file``, ``invalid_file``;
``server_error`` for an embedding failure), and the others go on.
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import Protocol

import anyio

from agentloom.api.vector_stores import LastError, StaticChunking
from agentloom.config import VectorStoreSettings
from agentloom.errors import InvalidRequestError, NotFoundError, UpstreamError
from agentloom.retrieval.chunking import chunk_spans
from agentloom.retrieval.embeddings import Embedder
from agentloom.services.files import FilesService
from agentloom.services.vector_stores.chunk_spool import ChunkSpool
from agentloom.storage.chunks_base import IngestionQueue
from agentloom.storage.jobs import JobRow
from agentloom.storage.vector_stores_base import Claim

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3  # claims of one file before it fails (a file that keeps killing its ingester)
_PARSE_CODES = frozenset({"unsupported_file", "invalid_file"})


class _ClaimLost(Exception):
    """The file was removed, cancelled or taken over while it was being ingested."""


class _Unreadable(Exception):
    def __init__(self, error: LastError) -> None:
        super().__init__(error.message)
        self.error = error


class IngestionObserver(Protocol):
    def __call__(self, status: str, chunks: int, seconds: float) -> None: ...


class Ingestor:
    """The :class:`~agentloom.services.jobs.runner.JobHandler` of kind ``"ingest"``: one file."""

    def __init__(
        self,
        chunks: IngestionQueue,
        files: FilesService,
        embedder: Embedder,
        settings: VectorStoreSettings,
        instance_id: str,
        on_ingested: IngestionObserver | None = None,
    ) -> None:
        """``on_ingested(status, chunks, seconds)``: told of each file's outcome."""
        self._on_ingested = on_ingested
        self._chunks = chunks
        self._files = files
        self._embedder = embedder
        self._settings = settings
        self._instance = instance_id

    async def run(self, job: JobRow) -> float | None:
        store_id, _, file_id = job.subject.partition("/")
        claim = await self._chunks.claim(store_id, file_id, self._instance)
        if claim is not None:  # else: removed, cancelled or done meanwhile
            await self.ingest(claim)
        return None

    async def stopped(self, job: JobRow) -> None:
        """Ingestion is stopped through the file (cancelled, removed): nothing to record."""

    async def requeued(self, job: JobRow) -> None:
        """The next run claims the file again: nothing to undo."""

    async def abandoned(self, job: JobRow, message: str) -> None:
        store_id, _, file_id = job.subject.partition("/")
        claim = await self._chunks.claim(store_id, file_id, self._instance)
        if claim is not None:
            await self._fail(claim, LastError(code="server_error", message=message))

    async def ingest(self, claim: Claim) -> None:
        """Ingest one claimed file and record the outcome."""
        started = time.perf_counter()
        chunks = await self._ingest(claim)
        if chunks is not None and self._on_ingested is not None:
            status = "failed" if chunks < 0 else "completed"
            self._on_ingested(status, max(chunks, 0), time.perf_counter() - started)

    async def _ingest(self, claim: Claim) -> int | None:
        """The chunks stored; -1 when the file failed; ``None`` when the claim was lost."""
        if claim.attempts > MAX_ATTEMPTS:
            message = f"Ingestion was interrupted {MAX_ATTEMPTS} times; giving up."
            await self._fail(claim, LastError(code="server_error", message=message))
            return -1
        with contextlib.ExitStack() as stack:
            try:
                spool = stack.enter_context(await self._chunked(claim))
                await self._embed(claim, spool)
            except _ClaimLost:
                return None
            except _Unreadable as exc:
                await self._fail(claim, exc.error)
                return -1
            except Exception:  # a bug: the file fails visibly, the other files go on
                log.exception(
                    "ingestion of %s into %s failed", claim.file_id, claim.vector_store_id
                )
                message = "The server had an error while processing the file."
                await self._fail(claim, LastError(code="server_error", message=message))
                return -1
            await self._chunks.complete(
                claim, self._instance, spool.batches, len(spool), spool.usage_bytes
            )
            return len(spool)

    async def _chunked(self, claim: Claim) -> ChunkSpool:
        text = await self._text(claim.file_id)
        strategy = StaticChunking.model_validate_json(claim.chunking_strategy)
        spans = await anyio.to_thread.run_sync(
            lambda: chunk_spans(
                text,
                max_tokens=strategy.max_chunk_size_tokens,
                overlap=strategy.chunk_overlap_tokens,
            )
        )
        return ChunkSpool(text, spans)

    async def _text(self, file_id: str) -> str:
        try:
            _, text = await self._files.text(file_id)
        except NotFoundError:
            raise _ClaimLost from None  # the file is being deleted: its hook removes the row
        except InvalidRequestError as exc:
            if exc.code not in _PARSE_CODES:
                raise
            raise _Unreadable(LastError(code=exc.code, message=exc.message)) from None
        if not text.strip():
            message = "The file has no text to index."
            raise _Unreadable(LastError(code="invalid_file", message=message))
        return text

    async def _embed(self, claim: Claim, spool: ChunkSpool) -> None:
        """Embed the chunks a batch at a time into ``spool``; before each, the progress is written
        where the claim still holds (a file no longer this instance's stops here)."""
        size, total = self._settings.embed_batch_size, len(spool)
        for start in range(0, total, size):
            if not await self._chunks.progress(claim, self._instance, start, total):
                raise _ClaimLost  # removed, cancelled or taken over meanwhile
            try:
                vectors = await self._embedder.embed(spool.texts(start, start + size))
            except UpstreamError as exc:
                message = f"Embedding failed: {exc.message}"
                raise _Unreadable(LastError(code="server_error", message=message)) from None
            await anyio.to_thread.run_sync(spool.add, vectors)

    async def _fail(self, claim: Claim, error: LastError) -> None:
        await self._chunks.fail(claim, self._instance, error.model_dump_json())
