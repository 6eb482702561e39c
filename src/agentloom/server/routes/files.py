"""``/v1/files``: upload, list, retrieve, download and delete files.

Downloads are always attachments with ``nosniff`` and a sandboxing CSP: a stored file is never
rendered by a browser as a page of this origin (HTML is served as plain text).
"""

from __future__ import annotations

from urllib.parse import quote

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

from agentloom.api.files import CreateFileRequest, FileDeleted, FileList, FileObject
from agentloom.engine.attachments import FileContent
from agentloom.retrieval import parsing
from agentloom.server.errors import validation_error
from agentloom.server.query import limit_param, optional_param, order_param
from agentloom.server.render import json_response
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import AFTER, BINARY, ORDER, ApiRoute, Op, Param, Upload, limit
from agentloom.server.uploads import read_upload
from agentloom.services.files import FilesService, file_too_large

MAX_LIST_LIMIT = 10_000

# Types served as they are; anything else (HTML, XML, SVG, unknown bytes) as an opaque download.
_SERVED_AS_IS = frozenset(
    {
        parsing.PDF,
        parsing.DOCX,
        parsing.ZIP,
        parsing.JSON,
        parsing.CSV,
        parsing.TSV,
        parsing.MARKDOWN,
        parsing.TEXT,
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
    }
)
_EXPIRY = ("anchor", "seconds")  # the SDK sends ``expires_after[anchor]``, ``[seconds]``
_DOWNLOAD_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "Cache-Control": "private, no-store",
}


def _files(request: Request) -> FilesService:
    return runtime_of(request).files


def _file_id(request: Request) -> str:
    file_id: str = request.path_params["file_id"]
    return file_id


async def create_file(request: Request) -> Response:
    files = _files(request)
    too_large = file_too_large(files.max_bytes)
    async with read_upload(request, max_bytes=files.max_bytes, too_large=too_large) as upload:
        body = _form(upload.fields)
        created = await files.create(upload.file, upload.filename, body.purpose, body.expires_after)
    return json_response(created)


async def list_files(request: Request) -> Response:
    params = request.query_params
    page = await _files(request).list(
        purpose=optional_param(params, "purpose"),
        after=optional_param(params, "after"),
        limit=limit_param(params, default=MAX_LIST_LIMIT, maximum=MAX_LIST_LIMIT),
        order=order_param(params),
    )
    return json_response(page)


async def retrieve_file(request: Request) -> Response:
    return json_response(await _files(request).get(_file_id(request)))


async def delete_file(request: Request) -> Response:
    return json_response(await _files(request).delete(_file_id(request)))


async def file_content(request: Request) -> Response:
    content = await _files(request).content(_file_id(request))
    headers = {**_DOWNLOAD_HEADERS, "Content-Disposition": content_disposition(content.filename)}
    return Response(content.data, media_type=served_type(content), headers=headers)


def served_type(content: FileContent) -> str:
    """The Content-Type a download is served with."""
    kind = content.content_type
    if kind == parsing.HTML:
        kind = parsing.TEXT  # shown as its source, never rendered
    if kind not in _SERVED_AS_IS:
        return parsing.BINARY
    if kind.startswith("text/") or kind == parsing.JSON:
        charset = "utf-16" if content.data[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8"
        return f"{kind}; charset={charset}"
    return kind


def content_disposition(filename: str) -> str:
    """``attachment`` with an ASCII fallback name and the UTF-8 name (RFC 6266)."""
    fallback = "".join(ch if 32 <= ord(ch) < 127 and ch not in '"\\;' else "_" for ch in filename)
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"


def _form(fields: dict[str, str]) -> CreateFileRequest:
    data: dict[str, object] = {k: v for k, v in fields.items() if k == "purpose"}
    expiry = {k: fields[f"expires_after[{k}]"] for k in _EXPIRY if f"expires_after[{k}]" in fields}
    if expiry:
        data["expires_after"] = expiry
    try:
        return CreateFileRequest.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, data) from None


routes = [
    ApiRoute(
        "/v1/files",
        GET=Op(
            list_files,
            returns=FileList,
            query=(
                Param("purpose", {"type": "string"}, "Only files of this purpose."),
                AFTER,
                limit(MAX_LIST_LIMIT, MAX_LIST_LIMIT),
                ORDER,
            ),
        ),
        POST=Op(create_file, upload=Upload(CreateFileRequest), returns=FileObject),
    ),
    ApiRoute(
        "/v1/files/{file_id}",
        GET=Op(retrieve_file, returns=FileObject),
        DELETE=Op(delete_file, returns=FileDeleted),
    ),
    ApiRoute(
        "/v1/files/{file_id}/content",
        GET=Op(
            file_content,
            content={"*/*": BINARY},
            description="The file's bytes, as an attachment (never rendered as a page).",
        ),
    ),
]
