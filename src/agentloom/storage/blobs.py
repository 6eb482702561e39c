"""Where the bytes of uploaded files live: a small key -> bytes seam.

:class:`LocalBlobStore` keeps each blob in a file of its own under ``root/<2 hex>/<2 hex>/<key>``
(the hex from a hash of the key, so directories stay small). A blob is written to a temporary
file in its directory and renamed into place, so a reader (another server process sharing the
directory) sees the whole blob or none of it; a write that fails or is cancelled half-way
removes its temporary file. :meth:`BlobStore.put_stream` stores a blob of any size chunk by
chunk, so memory stays bounded. Keys are plain names: no separators, no traversal. A full
filesystem is :class:`~agentloom.errors.InsufficientStorageError` (507), with nothing left
behind.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import re
import tempfile
from collections.abc import AsyncIterable, Callable, Iterator
from pathlib import Path
from typing import BinaryIO, Protocol

import anyio

from agentloom.errors import InsufficientStorageError

log = logging.getLogger(__name__)

_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-.]{0,199}")


class BlobNotFoundError(LookupError):
    """No blob is stored under the key."""


class BlobStore(Protocol):
    async def put(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key``, replacing any blob there."""

    async def put_stream(self, key: str, chunks: AsyncIterable[bytes]) -> None:
        """Store the concatenated ``chunks`` under ``key``, replacing any blob there. If the
        chunks raise (or the write is cancelled) nothing is stored and the old blob stays."""

    async def get(self, key: str) -> bytes:
        """The blob under ``key``; :class:`BlobNotFoundError` if there is none."""

    async def delete(self, key: str) -> None:
        """Remove the blob under ``key``; nothing if there is none."""


def check_key(key: str) -> str:
    if _KEY.fullmatch(key) is None or ".." in key:
        raise ValueError(f"invalid blob key {key[:60]!r}: letters, digits, '_', '-', '.' only")
    return key


class LocalBlobStore:
    """Blobs as files under ``root`` (created when needed)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, key: str) -> Path:
        digest = hashlib.sha256(check_key(key).encode()).hexdigest()
        return self.root / digest[:2] / digest[2:4] / key

    async def put(self, key: str, data: bytes) -> None:
        with _full_is_insufficient(self.root):
            await anyio.to_thread.run_sync(_write, self.path(key), data)

    async def put_stream(self, key: str, chunks: AsyncIterable[bytes]) -> None:
        with _full_is_insufficient(self.root):
            partial = await anyio.to_thread.run_sync(_PartialBlob.open, self.path(key))
            try:
                async for chunk in chunks:
                    await anyio.to_thread.run_sync(partial.write, chunk)
                await anyio.to_thread.run_sync(partial.commit)
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(partial.discard)
                raise

    async def get(self, key: str) -> bytes:
        return await anyio.to_thread.run_sync(_read, self.path(key))

    async def delete(self, key: str) -> None:
        await anyio.to_thread.run_sync(_remove, self.path(key))


BLOB_STORES: dict[str, Callable[[Path], BlobStore]] = {"local": LocalBlobStore}
"""Blob store implementations by the name ``[files] blob_store`` gives."""


def build_blob_store(name: str, directory: Path) -> BlobStore:
    factory = BLOB_STORES.get(name)
    if factory is None:
        raise ValueError(f"unknown blob store {name!r}; known: {', '.join(sorted(BLOB_STORES))}")
    return factory(directory)


class _PartialBlob:
    """A blob being written: a temporary file beside its final path, renamed into place by
    :meth:`commit` (after an fsync) or removed by :meth:`discard`."""

    def __init__(self, path: Path, temporary: str, file: BinaryIO) -> None:
        self._path = path
        self._temporary = temporary
        self._file = file

    @classmethod
    def open(cls, path: Path) -> _PartialBlob:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
        return cls(path, temporary, os.fdopen(fd, "wb"))

    def write(self, data: bytes) -> None:
        self._file.write(data)

    def commit(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        os.replace(self._temporary, self._path)

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            self._file.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._temporary)


_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})  # no space left; over the disk quota


@contextlib.contextmanager
def _full_is_insufficient(root: Path) -> Iterator[None]:
    """A full filesystem (or quota) is the caller's :class:`InsufficientStorageError`; any
    other disk error stays what it is."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in _FULL:
            raise
        log.error("the file storage at %s is full: %s", root, exc)
        raise InsufficientStorageError(
            "The file storage is full: the upload was not stored. Try again once space is freed."
        ) from exc


def _write(path: Path, data: bytes) -> None:
    partial = _PartialBlob.open(path)
    try:
        partial.write(data)
        partial.commit()
    except BaseException:
        partial.discard()
        raise


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise BlobNotFoundError(path.name) from None


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
