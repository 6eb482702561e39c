"""Containers: the rows (:mod:`agentloom.storage.containers`) and folders
(:mod:`agentloom.tools.containers`) code_interpreter runs in, for the API and the tool.

A container expires once unused for its ``expires_after.minutes``; every run and file
operation marks it active. Housekeeping deletes expired ones (:meth:`delete_idle`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import get_args

from agentloom.access_rules import Action
from agentloom.api.containers import (
    ContainerDeleted,
    ContainerExpiry,
    ContainerFileDeleted,
    ContainerFileList,
    ContainerFileObject,
    ContainerList,
    ContainerObject,
    CreateContainerRequest,
    MemoryLimit,
)
from agentloom.errors import NotFoundError
from agentloom.services.files import FilesService
from agentloom.storage.base import Order
from agentloom.storage.containers import ContainerRow, ContainerStore
from agentloom.tenancy import acting_for
from agentloom.tools.containers import (
    ContainerFile,
    Containers,
    FolderEntry,
    new_container_id,
    valid_container_id,
)
from agentloom.tools.sandbox import MOUNT

IDLE_BATCH = 100


class ContainersService:
    def __init__(
        self, store: ContainerStore, folders: Containers, files: FilesService, *, idle_minutes: int
    ) -> None:
        self._store = store
        self._folders = folders
        self._files = files
        self.idle_minutes = idle_minutes

    # --- the API -----------------------------------------------------------------------------

    async def create(self, request: CreateContainerRequest) -> ContainerObject:
        await self.require_files(request.file_ids, param="file_ids")
        minutes = request.expires_after.minutes if request.expires_after else self.idle_minutes
        row = await self._new(
            new_container_id(), request.name, request.file_ids, minutes, request.memory_limit
        )
        return container_object(row)

    async def get(self, container_id: str) -> ContainerObject:
        return container_object(await self._row(container_id))

    async def list(self, *, after: str | None, limit: int, order: Order) -> ContainerList:
        page = None
        if after is None or valid_container_id(after):
            page = await self._store.list_page(after=after, limit=limit, order=order, now=_now())
        if page is None:
            raise NotFoundError(f"No such container: {after}", param="after")
        data = [container_object(row) for row in page.data]
        return ContainerList(
            data=data,
            first_id=data[0].id if data else None,
            last_id=data[-1].id if data else None,
            has_more=page.has_more,
        )

    async def delete(self, container_id: str) -> ContainerDeleted:
        await self._row(container_id, action="delete")
        await self._store.delete(container_id)
        await self._folders.remove(container_id)
        return ContainerDeleted(id=container_id)

    async def add_file(self, container_id: str, file: ContainerFile) -> ContainerFileObject:
        await self._row(container_id, action="update")
        name = await self._folders.add(container_id, file)
        await self._store.touch(container_id, now=_now(), user_path=name)
        return await self.file(container_id, _id_of(await self._entries(container_id), name))

    async def add_uploaded(self, container_id: str, file_id: str) -> ContainerFileObject:
        await self._row(container_id, action="update")
        content = await self._files.content(file_id)
        return await self.add_file(container_id, ContainerFile(content.filename, content.data))

    async def files(
        self, container_id: str, *, after: str | None, limit: int, order: Order
    ) -> ContainerFileList:
        row = await self._row(container_id)
        entries = sorted(await self._entries(container_id), key=lambda e: (e.modified_at, e.path))
        if order == "desc":
            entries.reverse()
        if after is not None:
            ids = [e.id for e in entries]
            if after not in ids:
                raise NotFoundError(f"No such container file: {after}", param="after")
            entries = entries[ids.index(after) + 1 :]
        data = [_file_object(row, e) for e in entries[:limit]]
        return ContainerFileList(
            data=data,
            first_id=data[0].id if data else None,
            last_id=data[-1].id if data else None,
            has_more=len(entries) > limit,
        )

    async def file(self, container_id: str, file_id: str) -> ContainerFileObject:
        row = await self._row(container_id)
        return _file_object(row, await self._entry(container_id, file_id))

    async def file_content(self, container_id: str, file_id: str) -> tuple[str, bytes]:
        """The file's name and bytes."""
        await self._row(container_id)
        entry = await self._entry(container_id, file_id)
        await self._store.touch(container_id, now=_now())
        return Path(entry.path).name, await self._folders.read(container_id, entry.path)

    async def delete_file(self, container_id: str, file_id: str) -> ContainerFileDeleted:
        await self._row(container_id, action="update")
        entry = await self._entry(container_id, file_id)
        await self._folders.remove_file(container_id, entry.path)
        return ContainerFileDeleted(id=file_id)

    async def delete_idle(self) -> int:
        """Delete the expired containers (rows and folders); how many."""
        idle = await self._store.idle(now=_now(), limit=IDLE_BATCH)
        for container in idle:
            with acting_for(container.project_id):
                await self._store.delete(container.id)
            await self._folders.remove(container.id)
        return len(idle)

    # --- the code_interpreter tool (tools.code_interpreter.ContainerHost) --------------------

    async def require_files(self, file_ids: Sequence[str], *, param: str) -> None:
        for index, file_id in enumerate(file_ids):
            try:
                await self._files.get(file_id)
            except NotFoundError as exc:
                raise NotFoundError(exc.message, param=f"{param}[{index}]") from exc

    async def open(self, container_id: str, *, param: str) -> Path:
        await self._row(container_id, param=param)
        await self._store.touch(container_id, now=_now())
        return self._folders.folder(container_id)

    async def create_auto(self, container_id: str, file_ids: Sequence[str]) -> Path:
        await self._new(container_id, "code_interpreter", file_ids, self.idle_minutes)
        return self._folders.folder(container_id)

    # --- helpers -----------------------------------------------------------------------------

    async def _new(
        self,
        container_id: str,
        name: str,
        file_ids: Sequence[str],
        minutes: int,
        memory_limit: str | None = None,
    ) -> ContainerRow:
        files = []
        for file_id in file_ids:
            content = await self._files.content(file_id)
            files.append(ContainerFile(content.filename, content.data))
        names = await self._folders.create(container_id, files)
        now = _now()
        row = ContainerRow(container_id, now, name, now, minutes, memory_limit, names)
        await self._store.insert(row)
        return row

    async def _row(
        self, container_id: str, *, param: str | None = None, action: Action = "read"
    ) -> ContainerRow:
        """The container; a 404 when it does not exist, expired, or the access rules do not
        let the caller ``action`` it."""
        row = None
        if valid_container_id(container_id):
            row = await self._store.get(container_id, now=_now(), action=action)
        if row is None:
            raise NotFoundError(f"No container found with id '{container_id}'.", param=param)
        return row

    async def _entries(self, container_id: str) -> Sequence[FolderEntry]:
        return await self._folders.entries(container_id)

    async def _entry(self, container_id: str, file_id: str) -> FolderEntry:
        for entry in await self._entries(container_id):
            if entry.id == file_id:
                return entry
        raise NotFoundError(f"No file found with id '{file_id}' in container '{container_id}'.")


def container_object(row: ContainerRow) -> ContainerObject:
    return ContainerObject(
        id=row.id,
        created_at=int(row.created_at),
        name=row.name,
        expires_after=ContainerExpiry(minutes=row.expires_minutes),
        last_active_at=int(row.last_active_at),
        memory_limit=_memory_limit(row.memory_limit),
    )


def _file_object(row: ContainerRow, entry: FolderEntry) -> ContainerFileObject:
    return ContainerFileObject(
        id=entry.id,
        container_id=row.id,
        created_at=int(entry.modified_at),
        bytes=entry.bytes,
        path=f"{MOUNT}/{entry.path}",
        source="user" if entry.path in row.user_paths else "assistant",
    )


def _memory_limit(value: str | None) -> MemoryLimit | None:
    return next((limit for limit in get_args(MemoryLimit) if limit == value), None)


def _id_of(entries: Sequence[FolderEntry], path: str) -> str:
    return next(e.id for e in entries if e.path == path)


def _now() -> float:
    return time.time()
