"""The Files API's wire models (OpenAI's ``FileObject``, ``FileDeleted`` and the upload form)."""

from __future__ import annotations

from typing import Literal, TypeAlias, get_args

from pydantic import Field

from agentloom.api.lists import ListPage
from agentloom.api.wire import WireModel

FilePurpose: TypeAlias = Literal["assistants", "batch", "fine-tune", "vision", "user_data", "evals"]
FILE_PURPOSES: frozenset[str] = frozenset(get_args(FilePurpose))

MIN_EXPIRY_SECONDS = 3600  # one hour
MAX_EXPIRY_SECONDS = 2_592_000  # thirty days


class ExpiresAfter(WireModel):
    """When an uploaded file expires: ``seconds`` after its creation."""

    anchor: Literal["created_at"]
    seconds: int = Field(ge=MIN_EXPIRY_SECONDS, le=MAX_EXPIRY_SECONDS)


class CreateFileRequest(WireModel):
    """The form fields of ``POST /v1/files`` besides the file itself."""

    purpose: FilePurpose
    expires_after: ExpiresAfter | None = None


class FileObject(WireModel):
    id: str
    object: Literal["file"] = "file"
    bytes: int
    created_at: int
    expires_at: int | None = None
    filename: str
    purpose: str
    status: Literal["uploaded", "processed", "error"] = "processed"
    status_details: str | None = None


class FileDeleted(WireModel):
    id: str
    object: Literal["file"] = "file"
    deleted: bool = True


FileList: TypeAlias = ListPage[FileObject]
