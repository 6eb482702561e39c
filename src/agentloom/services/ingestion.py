"""Background ingestion of vector store files: text, chunks, embeddings, one final write.

The worker runs for the life of the server (in the app's task group). It claims one
``in_progress`` file at a time in the database, up to ``ingestion_concurrency`` at once, so
several server processes sharing a database split the work; the claims of an instance that
stopped beating are taken over. It is woken at once when this process adds files, and looks
for work from other processes every ``poll_interval`` seconds.

A file's chunks and its ``completed`` status are written in one transaction, and only while
the file is still in progress and claimed by this instance: a file removed, cancelled or taken
over meanwhile gets no chunks. Embedding checks the claim between batches, so a cancelled file
stops early. A file that cannot be read fails with ``last_error`` (``unsupported_file``,
``invalid_file``; ``server_error`` for an embedding failure), and the others go on.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import anyio
import numpy as np
from sqlalchemy.exc import DBAPIError

from agentloom.api.vector_stores import LastError, StaticChunking
from agentloom.config import VectorStoreSettings
from agentloom.errors import InvalidRequestError, NotFoundError, UpstreamError
from agentloom.retrieval.chunking import chunk_text
from agentloom.retrieval.embeddings import Embedder
from agentloom.services.files import FilesService
from agentloom.storage.chunks_base import IngestionQueue
from agentloom.storage.vector_stores_base import Claim, NewChunk
from agentloom.tenancy import acting_for

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3  # claims of one file before it fails (a file that keeps killing its ingester)
_PARSE_CODES = frozenset({"unsupported_file", "invalid_file"})


class _ClaimLost(Exception):
    """The file was removed, cancelled or taken over while it was being ingested."""


class _Unreadable(Exception):
    def __init__(self, error: LastError) -> None:
        super().__init__(error.message)
        self.error = error


@dataclass(frozen=True, slots=True)
class Liveness:
    """Which instance this is, and how long a silent instance counts as alive."""

    instance_id: str
    abandoned_after: float


class Ingestor:
    def __init__(
        self,
        chunks: IngestionQueue,
        files: FilesService,
        embedder: Embedder,
        settings: VectorStoreSettings,
        liveness: Liveness,
    ) -> None:
        self._chunks = chunks
        self._files = files
        self._embedder = embedder
        self._settings = settings
        self._liveness = liveness
        self._slots = anyio.Semaphore(settings.ingestion_concurrency)
        self._wakeup = anyio.Event()

    def wake(self) -> None:
        """There is new work: look for it now."""
        self._wakeup.set()

    async def run(self) -> None:
        """Ingest files until cancelled."""
        await self._chunks.release(self._liveness.instance_id)
        async with anyio.create_task_group() as tasks:
            while True:
                await self._slots.acquire()
                claim = await self._next()
                if claim is None:
                    self._slots.release()
                    with anyio.move_on_after(self._settings.poll_interval):
                        await self._wakeup.wait()
                    continue
                tasks.start_soon(self._ingest_one, claim)

    async def _next(self) -> Claim | None:
        self._wakeup = anyio.Event()  # work added from now on wakes the wait that follows
        now = time.time()
        live_since = now - self._liveness.abandoned_after
        try:
            return await self._chunks.claim(
                self._liveness.instance_id, live_since=live_since, now=now
            )
        except DBAPIError:
            log.warning("could not claim vector store files to ingest", exc_info=True)
            return None

    async def _ingest_one(self, claim: Claim) -> None:
        try:
            with acting_for(claim.project_id):
                await self.ingest(claim)
        except DBAPIError:
            log.warning("ingestion of %s stopped on a database error", claim.file_id, exc_info=True)
        finally:
            self._slots.release()

    async def ingest(self, claim: Claim) -> None:
        """Ingest one claimed file and record the outcome."""
        if claim.attempts > MAX_ATTEMPTS:
            message = f"Ingestion was interrupted {MAX_ATTEMPTS} times; giving up."
            await self._fail(claim, LastError(code="server_error", message=message))
            return
        try:
            chunks = await self._prepare(claim)
        except _ClaimLost:
            return
        except _Unreadable as exc:
            await self._fail(claim, exc.error)
            return
        except Exception:  # a bug: the file fails visibly, the other files go on
            log.exception("ingestion of %s into %s failed", claim.file_id, claim.vector_store_id)
            message = "The server had an error while processing the file."
            await self._fail(claim, LastError(code="server_error", message=message))
            return
        usage = sum(len(c.text.encode()) + len(c.vector) for c in chunks)
        await self._chunks.complete(claim, self._liveness.instance_id, chunks, usage)

    async def _prepare(self, claim: Claim) -> list[NewChunk]:
        text = await self._text(claim.file_id)
        strategy = StaticChunking.model_validate_json(claim.chunking_strategy)
        pieces = await anyio.to_thread.run_sync(
            lambda: chunk_text(
                text,
                max_tokens=strategy.max_chunk_size_tokens,
                overlap=strategy.chunk_overlap_tokens,
            )
        )
        texts = [piece.text for piece in pieces]
        vectors = await self._embed(claim, texts)
        return [
            NewChunk(position=at, text=chunk, vector=vectors[at].astype("<f4").tobytes())
            for at, chunk in enumerate(texts)
        ]

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

    async def _embed(self, claim: Claim, texts: list[str]) -> np.ndarray:
        size = self._settings.embed_batch_size
        parts = []
        for start in range(0, len(texts), size):
            if not await self._chunks.claimed(claim, self._liveness.instance_id):
                raise _ClaimLost
            try:
                parts.append(await self._embedder.embed(texts[start : start + size]))
            except UpstreamError as exc:
                message = f"Embedding failed: {exc.message}"
                raise _Unreadable(LastError(code="server_error", message=message)) from None
        return np.concatenate(parts)

    async def _fail(self, claim: Claim, error: LastError) -> None:
        await self._chunks.fail(claim, self._liveness.instance_id, error.model_dump_json())
