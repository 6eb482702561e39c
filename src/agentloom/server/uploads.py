"""Multipart uploads: one file and a few small fields, read with a size limit of their own.

The body is streamed through Starlette's multipart parser (file data spools to a temporary
file past 1 MiB) and reading stops as soon as it passes the limit, which is the upload's own
(``[files] max_bytes``), not the JSON body limit. A declared ``Content-Length`` over the limit is
refused before anything is read. The file is handed on as that spooled file, never read into
memory whole, and is closed (its temporary file removed) when the ``async with`` ends.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing, asynccontextmanager
from dataclasses import field
from typing import BinaryIO

from starlette.datastructures import FormData, UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request

from agentloom.errors import InvalidRequestError, PayloadTooLargeError
from agentloom.frozen import frozen
from agentloom.server.body import declared_over

FIELD_BYTES = 64 * 1024  # the most a plain form field may hold
OVERHEAD_BYTES = 1024 * 1024  # allowance for the fields, part headers and boundaries
MAX_FIELDS = 16


@frozen
class Upload:
    filename: str
    file: BinaryIO  # seekable, at its start; read it in a thread
    fields: dict[str, str] = field(default_factory=dict)


@asynccontextmanager
async def read_upload(
    request: Request, *, max_bytes: int, too_large: PayloadTooLargeError, file_field: str = "file"
) -> AsyncIterator[Upload]:
    """The file in ``file_field`` and the other fields, while the ``async with`` lasts;
    ``too_large`` is raised once the file (or the body) is larger than ``max_bytes`` allows."""
    _check_multipart(request)
    limit = max_bytes + OVERHEAD_BYTES
    declared = request.headers.get("content-length")
    if declared is not None and declared_over(declared, limit):
        raise too_large
    async with aclosing(_limited(request.stream(), limit, too_large)) as stream:
        form = await _parse(request, stream)
    try:
        upload = form.get(file_field)
        if not isinstance(upload, UploadFile):
            raise _missing_file(file_field, present=upload is not None)
        if upload.size is not None and upload.size > max_bytes:
            raise too_large
        fields = {k: v for k, v in form.multi_items() if isinstance(v, str)}
        yield Upload(filename=upload.filename or "", file=upload.file, fields=fields)
    finally:
        await form.close()


def _check_multipart(request: Request) -> None:
    content_type = request.headers.get("content-type", "")
    if content_type.split(";", 1)[0].strip().lower() != "multipart/form-data":
        raise InvalidRequestError(
            "This endpoint expects a multipart/form-data body (a 'file' part and form fields).",
            code="invalid_content_type",
        )


async def _parse(request: Request, stream: AsyncGenerator[bytes, None]) -> FormData:
    parser = MultiPartParser(
        request.headers, stream, max_files=1, max_fields=MAX_FIELDS, max_part_size=FIELD_BYTES
    )
    try:
        return await parser.parse()
    except MultiPartException as exc:
        raise InvalidRequestError(
            f"Invalid multipart body: {exc.message}", code="invalid_multipart"
        ) from None


async def _limited(
    chunks: AsyncIterator[bytes], limit: int, too_large: PayloadTooLargeError
) -> AsyncGenerator[bytes, None]:
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise too_large
        yield chunk


def _missing_file(name: str, *, present: bool) -> InvalidRequestError:
    if present:
        return InvalidRequestError(
            f"'{name}' must be a file part (with a filename), not a plain field.",
            param=name,
            code="invalid_value",
        )
    return InvalidRequestError(
        f"Missing required parameter: '{name}'.", param=name, code="missing_required_parameter"
    )
