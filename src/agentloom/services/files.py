"""The files service: the Files API (upload, read, list, download, delete, expiry) and the text
of a file for those who use it (``input_file`` parts, vector stores).

A file's bytes are streamed to the blob store (hashed and counted on the way, in chunks of
:data:`CHUNK_BYTES`, so an upload's memory does not grow with its size) under a key derived
from its id, then its row is written: a row always has its bytes. Deleting runs the
``on_delete`` hooks first (a vector store drops the file), then removes the row, then the
bytes. An expired file reads as missing everywhere; :meth:`FilesService.delete_expired` (run by
the server's housekeeping) removes it for good.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import time
from collections import OrderedDict
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from typing import BinaryIO

import anyio

from agentloom.api.files import (
    FILE_PURPOSES,
    ExpiresAfter,
    FileDeleted,
    FileList,
    FileObject,
)
from agentloom.engine.attachments import FileContent
from agentloom.errors import InvalidRequestError, NotFoundError, PayloadTooLargeError
from agentloom.ids import new_id
from agentloom.retrieval.parsing import FileParseError, extract_text, sniff_file
from agentloom.services.filenames import sanitize_filename
from agentloom.storage.base import Order
from agentloom.storage.blobs import BlobNotFoundError, BlobStore
from agentloom.storage.files import FileQuery, FileRow, FileStore
from agentloom.tenancy import acting_for

log = logging.getLogger(__name__)

DeleteHook = Callable[[str], Awaitable[None]]
"""Runs with a file's id before the file is deleted (by a caller or by expiry)."""

_FILE_ID = re.compile(r"file-[0-9a-f]{48}")
DEFAULT_TEXT_CACHE_CHARS = 64 * 1024 * 1024
CHUNK_BYTES = 1024 * 1024  # what an upload is read and written in
EXPIRED_BATCH = 500


class FilesService:
    def __init__(
        self,
        store: FileStore,
        blobs: BlobStore,
        *,
        max_bytes: int,
        text_cache_chars: int = DEFAULT_TEXT_CACHE_CHARS,
    ) -> None:
        self._store = store
        self._blobs = blobs
        self.max_bytes = max_bytes
        self.on_delete: list[DeleteHook] = []
        self._texts = _TextCache(text_cache_chars)

    async def create(
        self,
        file: BinaryIO,
        filename: str,
        purpose: str,
        expires_after: ExpiresAfter | None = None,
    ) -> FileObject:
        """Store the bytes of ``file`` (seekable; read from its start, in a thread, and left
        open) as a new file. An empty file is a 400, one over :attr:`max_bytes` a 413."""
        _check_purpose(purpose)
        _check_size(await anyio.to_thread.run_sync(_size_of, file), self.max_bytes)
        name = sanitize_filename(filename)
        content_type = await anyio.to_thread.run_sync(sniff_file, file, name)
        now = time.time()
        file_id = new_id("file", separator="-")
        reader = _HashingReader(file)
        async with aclosing(reader.chunks()) as chunks:
            await self._blobs.put_stream(file_id, chunks)
        row = FileRow(
            id=file_id,
            created_at=now,
            filename=name,
            purpose=purpose,
            bytes=reader.size,
            content_type=content_type,
            sha256=reader.sha256.hexdigest(),
            expires_at=None if expires_after is None else now + expires_after.seconds,
            blob_key=file_id,
        )
        await self._insert(row)
        return file_object(row)

    async def write(
        self, data: bytes, *, file_id: str, filename: str, purpose: str, expires_in: float | None
    ) -> FileObject:
        """A file the server writes itself (a batch's output, purpose ``batch_output``) under
        an id its writer derived (:func:`derived_file_id`), so that writing it again (its
        writer ran again after its process stopped) keeps the one file."""
        now = time.time()
        existing = await self._store.get(file_id, now=now)
        if existing is not None:
            return file_object(existing)
        await self._blobs.put(file_id, data)
        row = FileRow(
            id=file_id,
            created_at=now,
            filename=sanitize_filename(filename),
            purpose=purpose,
            bytes=len(data),
            content_type="application/jsonl",
            sha256=hashlib.sha256(data).hexdigest(),
            expires_at=None if expires_in is None else now + expires_in,
            blob_key=file_id,
        )
        await self._insert(row)
        return file_object(row)

    async def get(self, file_id: str) -> FileObject:
        return file_object(await self._row(file_id))

    async def list(
        self,
        *,
        purpose: str | None = None,
        after: str | None = None,
        limit: int = 10_000,
        order: Order = "desc",
    ) -> FileList:
        query = FileQuery(purpose=purpose, after=after, limit=limit, order=order)
        page = None
        if after is None or _FILE_ID.fullmatch(after):
            page = await self._store.list_page(query, now=time.time())
        if page is None:
            raise NotFoundError(f"No such File object: {after}", param="after")
        data = [file_object(row) for row in page.data]
        return FileList(
            data=data,
            first_id=data[0].id if data else None,
            last_id=data[-1].id if data else None,
            has_more=page.has_more,
        )

    async def content(self, file_id: str) -> FileContent:
        return await self._read(await self._row(file_id))

    async def delete(self, file_id: str) -> FileDeleted:
        await self._row(file_id)
        if not await self._remove(file_id):
            raise _not_found(file_id)
        return FileDeleted(id=file_id)

    async def text(self, file_id: str) -> tuple[FileObject, str]:
        """The file and its text (extracted once, then cached). A file without extractable
        text is a 400 whose ``code`` is ``unsupported_file`` or ``invalid_file``."""
        row = await self._row(file_id)
        text = self._texts.get(file_id)
        if text is None:
            content = await self._read(row)
            text = await anyio.to_thread.run_sync(_extract, content)
            self._texts.put(file_id, text)
        return file_object(row), text

    async def delete_expired(self) -> int:
        """Delete up to a batch of expired files (hooks, row, bytes); how many were deleted."""
        rows = await self._store.expired(now=time.time(), limit=EXPIRED_BATCH)
        deleted = 0
        for row in rows:
            with acting_for(row.project_id):
                deleted += await self._remove(row.id)
        return deleted

    # --- helpers -----------------------------------------------------------------------------

    async def _row(self, file_id: str) -> FileRow:
        row = None
        if _FILE_ID.fullmatch(file_id):
            row = await self._store.get(file_id, now=time.time())
        if row is None:
            raise _not_found(file_id)
        return row

    async def _read(self, row: FileRow) -> FileContent:
        try:
            data = await self._blobs.get(row.blob_key)
        except BlobNotFoundError:
            raise _not_found(row.id) from None  # deleted meanwhile (by another process)
        return FileContent(data=data, content_type=row.content_type, filename=row.filename)

    async def _insert(self, row: FileRow) -> None:
        try:
            await self._store.insert(row)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._blobs.delete(row.blob_key)
            raise

    async def _remove(self, file_id: str) -> bool:
        for hook in self.on_delete:
            await hook(file_id)
        row = await self._store.delete(file_id)
        self._texts.drop(file_id)
        if row is None:
            return False
        try:
            await self._blobs.delete(row.blob_key)
        except OSError:  # the row is gone: the file is deleted; its bytes are left behind
            log.warning("could not remove the bytes of deleted file %s", file_id, exc_info=True)
        return True


class _HashingReader:
    """Reads a file from its start in chunks, each in a thread, hashing and counting them."""

    def __init__(self, file: BinaryIO) -> None:
        self._file = file
        self.sha256 = hashlib.sha256()
        self.size = 0

    async def chunks(self) -> AsyncGenerator[bytes, None]:
        await anyio.to_thread.run_sync(self._file.seek, 0)
        while chunk := await anyio.to_thread.run_sync(self._read):
            yield chunk

    def _read(self) -> bytes:
        chunk = self._file.read(CHUNK_BYTES)
        self.sha256.update(chunk)
        self.size += len(chunk)
        return chunk


class _TextCache:
    """Extracted texts by file id, least recently used dropped past ``max_chars`` in all."""

    def __init__(self, max_chars: int) -> None:
        self._texts: OrderedDict[str, str] = OrderedDict()
        self._chars = 0
        self._max = max_chars

    def get(self, file_id: str) -> str | None:
        text = self._texts.get(file_id)
        if text is not None:
            self._texts.move_to_end(file_id)
        return text

    def put(self, file_id: str, text: str) -> None:
        if len(text) > self._max:
            return
        self.drop(file_id)
        self._texts[file_id] = text
        self._chars += len(text)
        while self._chars > self._max:
            _, dropped = self._texts.popitem(last=False)
            self._chars -= len(dropped)

    def drop(self, file_id: str) -> None:
        text = self._texts.pop(file_id, None)
        if text is not None:
            self._chars -= len(text)


def file_object(row: FileRow) -> FileObject:
    return FileObject(
        id=row.id,
        bytes=row.bytes,
        created_at=int(row.created_at),
        expires_at=None if row.expires_at is None else int(row.expires_at),
        filename=row.filename,
        purpose=row.purpose,
    )


def _check_purpose(purpose: str) -> None:
    if purpose not in FILE_PURPOSES:
        raise InvalidRequestError(
            f"Invalid 'purpose': '{purpose[:100]}'. Expected one of: "
            f"{', '.join(sorted(FILE_PURPOSES))}.",
            param="purpose",
            code="invalid_value",
        )


def _check_size(size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise file_too_large(max_bytes)
    if not size:
        raise InvalidRequestError("The uploaded file is empty.", param="file", code="empty_file")


def file_too_large(max_bytes: int) -> PayloadTooLargeError:
    return PayloadTooLargeError(
        f"The file is larger than the limit of {max_bytes} bytes.", param="file"
    )


def _size_of(file: BinaryIO) -> int:
    return file.seek(0, os.SEEK_END)


def _extract(content: FileContent) -> str:
    try:
        return extract_text(
            content.data, filename=content.filename, content_type=content.content_type
        )
    except FileParseError as exc:
        raise InvalidRequestError(exc.message, param="file_id", code=exc.code) from None


def _not_found(file_id: str) -> NotFoundError:
    return NotFoundError(f"No such File object: {file_id[:100]}", param="file_id")


def derived_file_id(*parts: str) -> str:
    """A file id (``file-`` and 48 hex digits) that ``parts`` always give, for
    :meth:`FilesService.write`."""
    return "file-" + hashlib.sha256("/".join(parts).encode()).hexdigest()[:48]
