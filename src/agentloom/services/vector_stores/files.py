"""The files of vector stores and file batches: attach, list, read, update, detach, cancel.

Attaching names files of the Files API (each is checked: a missing one is a 404 naming where
it was given). A file attached again is returned as it is (attributes and chunking strategy
unchanged; ``update`` changes attributes): attaching is idempotent, as OpenAI's is; only a file
that failed or was cancelled is ingested again, as attached now. A batch naming a file already
in the store takes it into the batch, with its current status.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Sequence

from agentloom.api.lists import ListPage
from agentloom.api.vector_stores import (
    BatchFile,
    CreateFileBatchRequest,
    CreateVectorStoreFileRequest,
    FileContent,
    FileContentPage,
    UpdateVectorStoreFileRequest,
    VectorStoreFile,
    VectorStoreFileBatch,
    VectorStoreFileDeleted,
    resolve_chunking,
)
from agentloom.errors import NotFoundError
from agentloom.ids import new_id
from agentloom.services.files import FilesService
from agentloom.services.vector_stores.objects import batch_object, file_object
from agentloom.storage.base import Page
from agentloom.storage.chunks_base import ChunkRemover
from agentloom.storage.vector_stores import SqlVectorStoreStore
from agentloom.storage.vector_stores_base import (
    BatchRow,
    Cursor,
    FileStatus,
    StoreFileRow,
)

UsableCheck = Callable[[str], Awaitable[None]]
"""Raises unless the store exists and can take files (not expired, same embedder)."""


class VectorStoreFiles:
    def __init__(
        self,
        stores: SqlVectorStoreStore,
        chunks: ChunkRemover,
        files: FilesService,
        *,
        usable: UsableCheck,
        wake: Callable[[], None],
    ) -> None:
        self._stores = stores
        self._chunks = chunks
        self._files = files
        self._usable = usable
        self._wake = wake

    # --- files -------------------------------------------------------------------------------

    async def add(self, store_id: str, request: CreateVectorStoreFileRequest) -> VectorStoreFile:
        await self._usable(store_id)
        entry = BatchFile(
            file_id=request.file_id,
            attributes=request.attributes,
            chunking_strategy=request.chunking_strategy,
        )
        rows = await self.rows(store_id, [entry], params=["file_id"])
        added = await self._stores.add_files(store_id, rows)
        if not added:
            raise store_not_found(store_id)
        self._wake()
        return file_object(added[0])

    async def list_files(
        self, store_id: str, cursor: Cursor, status: FileStatus | None
    ) -> ListPage[VectorStoreFile]:
        await self._existing(store_id)
        page = await self._stores.list_files(store_id, cursor, status=status)
        return _list(page)

    async def get(self, store_id: str, file_id: str) -> VectorStoreFile:
        return file_object(await self._row(store_id, file_id))

    async def update(
        self, store_id: str, file_id: str, request: UpdateVectorStoreFileRequest
    ) -> VectorStoreFile:
        await self._row(store_id, file_id)
        attributes = json.dumps(request.attributes or {})
        row = await self._stores.set_attributes(store_id, file_id, attributes)
        if row is None:
            raise file_not_found(store_id, file_id)
        return file_object(row)

    async def remove(self, store_id: str, file_id: str) -> VectorStoreFileDeleted:
        await self._existing(store_id)
        if not await self._chunks.remove_file(store_id, file_id):
            raise file_not_found(store_id, file_id)
        return VectorStoreFileDeleted(id=file_id)

    async def content(self, store_id: str, file_id: str) -> FileContentPage:
        await self._row(store_id, file_id)
        _, text = await self._files.text(file_id)
        return FileContentPage(data=[FileContent(text=text)])

    # --- batches -----------------------------------------------------------------------------

    async def create_batch(
        self, store_id: str, request: CreateFileBatchRequest
    ) -> VectorStoreFileBatch:
        await self._usable(store_id)
        entries = request.entries()
        source = "files" if request.files is not None else "file_ids"
        suffix = ".file_id" if source == "files" else ""
        params = [f"{source}[{at}]{suffix}" for at in range(len(entries))]
        batch = BatchRow(id=new_id("vsfb"), vector_store_id=store_id, created_at=time.time())
        rows = await self.rows(store_id, entries, params=params, batch_id=batch.id)
        if await self._stores.add_files(store_id, rows, batch) is None:
            raise store_not_found(store_id)
        self._wake()
        return await self.get_batch(store_id, batch.id)

    async def get_batch(self, store_id: str, batch_id: str) -> VectorStoreFileBatch:
        state = await self._stores.get_batch(store_id, batch_id)
        if state is None:
            raise await self._batch_not_found(store_id, batch_id)
        return batch_object(state)

    async def cancel_batch(self, store_id: str, batch_id: str) -> VectorStoreFileBatch:
        state = await self._stores.cancel_batch(store_id, batch_id)
        if state is None:
            raise await self._batch_not_found(store_id, batch_id)
        return batch_object(state)

    async def list_batch_files(
        self, store_id: str, batch_id: str, cursor: Cursor, status: FileStatus | None
    ) -> ListPage[VectorStoreFile]:
        await self.get_batch(store_id, batch_id)
        page = await self._stores.list_files(store_id, cursor, status=status, batch_id=batch_id)
        return _list(page)

    # --- helpers -----------------------------------------------------------------------------

    async def rows(
        self,
        store_id: str,
        entries: Sequence[BatchFile],
        *,
        params: Sequence[str],
        batch_id: str | None = None,
    ) -> list[StoreFileRow]:
        """New in-progress rows for ``entries`` (each file checked; repeats dropped)."""
        now = time.time()
        rows: dict[str, StoreFileRow] = {}
        for entry, param in zip(entries, params, strict=True):
            await self._check_file(entry.file_id, param)
            rows.setdefault(
                entry.file_id,
                StoreFileRow(
                    vector_store_id=store_id,
                    file_id=entry.file_id,
                    created_at=now,
                    status="in_progress",
                    attributes=json.dumps(entry.attributes or {}),
                    chunking_strategy=resolve_chunking(entry.chunking_strategy).model_dump_json(),
                    batch_id=batch_id,
                ),
            )
        return list(rows.values())

    async def _check_file(self, file_id: str, param: str) -> None:
        try:
            await self._files.get(file_id)
        except NotFoundError as exc:
            raise NotFoundError(exc.message, param=param, code=exc.code) from None

    async def _existing(self, store_id: str) -> None:
        if await self._stores.get(store_id) is None:
            raise store_not_found(store_id)

    async def _row(self, store_id: str, file_id: str) -> StoreFileRow:
        row = await self._stores.get_file(store_id, file_id)
        if row is None:
            await self._existing(store_id)
            raise file_not_found(store_id, file_id)
        return row

    async def _batch_not_found(self, store_id: str, batch_id: str) -> NotFoundError:
        await self._existing(store_id)
        return NotFoundError(
            f"No file batch with id '{batch_id}' in vector store '{store_id}'.", param="batch_id"
        )


def _list(page: Page[StoreFileRow]) -> ListPage[VectorStoreFile]:
    data = [file_object(row) for row in page.data]
    return ListPage[VectorStoreFile](
        data=data,
        first_id=data[0].id if data else None,
        last_id=data[-1].id if data else None,
        has_more=page.has_more,
    )


def store_not_found(store_id: str) -> NotFoundError:
    return NotFoundError(f"No vector store found with id '{store_id}'.", param="vector_store_id")


def file_not_found(store_id: str, file_id: str) -> NotFoundError:
    return NotFoundError(
        f"No file with id '{file_id}' in vector store '{store_id}'.", param="file_id"
    )
