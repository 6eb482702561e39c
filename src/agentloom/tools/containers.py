"""Container folders: the working directories code_interpreter runs in, one folder each.

A container is a folder ``<root>/<id>`` holding the files put in and those the code wrote
(the rows describing containers are in :mod:`agentloom.storage.containers`). Ids are checked
against their pattern before they name a path, and file paths are resolved inside the folder;
links are never followed.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import uuid
from collections.abc import Sequence
from pathlib import Path

import anyio

from agentloom.frozen import frozen
from agentloom.tools.sandbox import list_files

_ID = re.compile(r"^cntr_[0-9a-f]{32}$")


@frozen
class ContainerFile:
    """A file to put into a container."""

    filename: str
    data: bytes


@frozen
class FolderEntry:
    """A file in a container's folder."""

    id: str
    path: str  # relative to the folder
    bytes: int
    modified_at: float


def new_container_id() -> str:
    return f"cntr_{uuid.uuid4().hex}"


def valid_container_id(container_id: str) -> bool:
    return _ID.fullmatch(container_id) is not None


def file_id(container_id: str, path: str) -> str:
    """A container file's id: stable for its path, so files the code wrote have one too."""
    digest = hashlib.sha256(f"{container_id}\0{path}".encode()).hexdigest()
    return f"cfile_{digest[:32]}"


class Containers:
    def __init__(self, root: Path) -> None:
        self.root = root

    def folder(self, container_id: str) -> Path:
        if not valid_container_id(container_id):
            raise ValueError(f"not a container id: {container_id!r}")
        return self.root / container_id

    async def create(self, container_id: str, files: Sequence[ContainerFile]) -> tuple[str, ...]:
        """Make the folder with ``files`` in it; the names they got."""
        folder = self.folder(container_id)
        return await anyio.to_thread.run_sync(_populate, folder, files)

    async def add(self, container_id: str, file: ContainerFile) -> str:
        """Put ``file`` in (renamed if the name is taken); its name."""
        folder = self.folder(container_id)
        return await anyio.to_thread.run_sync(_add, folder, file)

    async def entries(self, container_id: str) -> list[FolderEntry]:
        folder = self.folder(container_id)
        return await anyio.to_thread.run_sync(_entries, container_id, folder)

    async def read(self, container_id: str, path: str) -> bytes:
        return await anyio.to_thread.run_sync(_read_no_link, self._inside(container_id, path))

    async def remove_file(self, container_id: str, path: str) -> None:
        await anyio.to_thread.run_sync(self._inside(container_id, path).unlink)

    async def remove(self, container_id: str) -> None:
        folder = self.folder(container_id)
        await anyio.to_thread.run_sync(lambda: shutil.rmtree(folder, ignore_errors=True))

    def _inside(self, container_id: str, path: str) -> Path:
        folder = self.folder(container_id)
        target = folder / path
        if target.is_symlink() or not target.resolve().is_relative_to(folder.resolve()):
            raise ValueError(f"not a file of the container: {path!r}")
        return target


def _read_no_link(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as file:
        return file.read()


def _populate(folder: Path, files: Sequence[ContainerFile]) -> tuple[str, ...]:
    folder.mkdir(parents=True, exist_ok=False)
    return tuple(_add(folder, file) for file in files)


def _add(folder: Path, file: ContainerFile) -> str:
    name = _unique(folder, _plain_name(file.filename))
    (folder / name).write_bytes(file.data)
    return name


def _entries(container_id: str, folder: Path) -> list[FolderEntry]:
    if not folder.is_dir():
        return []
    found = []
    for path in list_files(folder):
        stat = (folder / path).stat()
        found.append(FolderEntry(file_id(container_id, path), path, stat.st_size, stat.st_mtime))
    return found


def _plain_name(filename: str) -> str:
    """The last part of ``filename`` (the files service already sanitised it); never a path."""
    name = Path(filename.replace("\\", "/")).name.strip()
    return name if name not in ("", ".", "..") else "file"


def _unique(folder: Path, name: str) -> str:
    stem, dot, suffix = name.rpartition(".")
    candidate, n = name, 1
    while (folder / candidate).exists() or (folder / candidate).is_symlink():
        n += 1
        candidate = f"{stem}-{n}.{suffix}" if dot and stem else f"{name}-{n}"
    return candidate
