"""Where the bytes of uploaded files live: a small key -> bytes seam.

:class:`LocalBlobStore` keeps each blob in a file of its own under ``root/<2 hex>/<2 hex>/<key>``
(the hex from a hash of the key, so directories stay small). A blob is written to a temporary
file in its directory and renamed into place, so a reader (another server process sharing the
directory) sees the whole blob or none of it. Keys are plain names: no separators, no traversal.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import anyio

_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-.]{0,199}")


class BlobNotFoundError(LookupError):
    """No blob is stored under the key."""


class BlobStore(Protocol):
    async def put(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key``, replacing any blob there."""

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
        await anyio.to_thread.run_sync(_write, self.path(key), data)

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


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise BlobNotFoundError(path.name) from None


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
