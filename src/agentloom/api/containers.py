"""Containers (``/v1/containers``): where code_interpreter runs, and the files in them."""

from __future__ import annotations

from typing import Literal, TypeAlias

from pydantic import Field

from agentloom.api.lists import ListPage
from agentloom.api.wire import WireModel

MemoryLimit = Literal["1g", "4g", "16g", "64g"]


class ContainerExpiry(WireModel):
    anchor: Literal["last_active_at"] = "last_active_at"
    minutes: int = Field(ge=1, le=7 * 24 * 60)


class CreateContainerRequest(WireModel):
    name: str = Field(min_length=1, max_length=256)
    expires_after: ContainerExpiry | None = None
    file_ids: list[str] = Field(default_factory=list, max_length=100)
    memory_limit: MemoryLimit | None = None


class ContainerObject(WireModel):
    id: str
    object: Literal["container"] = "container"
    created_at: int
    name: str
    status: Literal["running", "expired"] = "running"
    expires_after: ContainerExpiry
    last_active_at: int
    memory_limit: MemoryLimit | None = None


class ContainerDeleted(WireModel):
    id: str
    object: Literal["container.deleted"] = "container.deleted"
    deleted: bool = True


class CreateContainerFileRequest(WireModel):
    """The JSON form of a container file upload: copy an uploaded file in."""

    file_id: str = Field(min_length=1)


class ContainerFileObject(WireModel):
    id: str
    object: Literal["container.file"] = "container.file"
    container_id: str
    created_at: int
    bytes: int
    path: str  # as the code sees it: /mnt/data/...
    source: Literal["user", "assistant"]


class ContainerFileDeleted(WireModel):
    id: str
    object: Literal["container.file.deleted"] = "container.file.deleted"
    deleted: bool = True


ContainerList: TypeAlias = ListPage[ContainerObject]
ContainerFileList: TypeAlias = ListPage[ContainerFileObject]
