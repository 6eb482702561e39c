"""``/v1/containers``: code_interpreter's containers and the files in them.

A file is put in by a multipart upload (``file``) or by the id of an uploaded file (JSON
``{"file_id"}``). Downloads are attachments with ``nosniff`` and a sandboxing CSP, like
``/v1/files``: what the code wrote is never rendered as a page of this origin.
"""

from __future__ import annotations

import anyio
from starlette.requests import Request
from starlette.responses import Response

from agentloom.api.containers import (
    ContainerDeleted,
    ContainerFileDeleted,
    ContainerFileList,
    ContainerFileObject,
    ContainerList,
    ContainerObject,
    CreateContainerFileRequest,
    CreateContainerRequest,
)
from agentloom.errors import InvalidRequestError
from agentloom.server.body import parse_body
from agentloom.server.query import limit_param, optional_param, order_param
from agentloom.server.render import json_response
from agentloom.server.routes.files import content_disposition
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import BINARY, PAGE, ApiRoute, Op, Upload
from agentloom.server.uploads import read_upload
from agentloom.services.containers import ContainersService
from agentloom.services.files import file_too_large
from agentloom.tools.containers import ContainerFile

_DOWNLOAD_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "Cache-Control": "private, no-store",
}


def _containers(request: Request) -> ContainersService:
    containers = runtime_of(request).containers
    if containers is None:
        raise InvalidRequestError("Containers are not available on this server.")
    return containers


def _ids(request: Request) -> tuple[str, str]:
    params = request.path_params
    return str(params["container_id"]), str(params.get("file_id", ""))


async def create_container(request: Request) -> Response:
    body = await parse_body(request, CreateContainerRequest)
    return json_response(await _containers(request).create(body))


async def list_containers(request: Request) -> Response:
    params = request.query_params
    page = await _containers(request).list(
        after=optional_param(params, "after"), limit=limit_param(params), order=order_param(params)
    )
    return json_response(page)


async def retrieve_container(request: Request) -> Response:
    return json_response(await _containers(request).get(_ids(request)[0]))


async def delete_container(request: Request) -> Response:
    return json_response(await _containers(request).delete(_ids(request)[0]))


async def create_file(request: Request) -> Response:
    containers, (container_id, _) = _containers(request), _ids(request)
    if request.headers.get("content-type", "").startswith("application/json"):
        body = await parse_body(request, CreateContainerFileRequest)
        return json_response(await containers.add_uploaded(container_id, body.file_id))
    limit = runtime_of(request).files.max_bytes
    async with read_upload(request, max_bytes=limit, too_large=file_too_large(limit)) as upload:
        data = await anyio.to_thread.run_sync(upload.file.read)
    created = await containers.add_file(container_id, ContainerFile(upload.filename, data))
    return json_response(created)


async def list_files(request: Request) -> Response:
    params = request.query_params
    page = await _containers(request).files(
        _ids(request)[0],
        after=optional_param(params, "after"),
        limit=limit_param(params),
        order=order_param(params),
    )
    return json_response(page)


async def retrieve_file(request: Request) -> Response:
    return json_response(await _containers(request).file(*_ids(request)))


async def delete_file(request: Request) -> Response:
    return json_response(await _containers(request).delete_file(*_ids(request)))


async def file_content(request: Request) -> Response:
    name, data = await _containers(request).file_content(*_ids(request))
    headers = {**_DOWNLOAD_HEADERS, "Content-Disposition": content_disposition(name)}
    return Response(data, media_type="application/octet-stream", headers=headers)


_FILE = "/v1/containers/{container_id}/files/{file_id}"
routes = [
    ApiRoute(
        "/v1/containers",
        GET=Op(list_containers, returns=ContainerList, query=PAGE),
        POST=Op(create_container, body=CreateContainerRequest, returns=ContainerObject),
    ),
    ApiRoute(
        "/v1/containers/{container_id}",
        GET=Op(retrieve_container, returns=ContainerObject),
        DELETE=Op(delete_container, returns=ContainerDeleted),
    ),
    ApiRoute(
        "/v1/containers/{container_id}/files",
        GET=Op(list_files, returns=ContainerFileList, query=PAGE),
        POST=Op(
            create_file,
            body=CreateContainerFileRequest,
            upload=Upload(),
            returns=ContainerFileObject,
            description="A file uploaded (multipart), or one of /v1/files named by its id (JSON).",
        ),
    ),
    ApiRoute(
        _FILE,
        GET=Op(retrieve_file, returns=ContainerFileObject),
        DELETE=Op(delete_file, returns=ContainerFileDeleted),
    ),
    ApiRoute(
        f"{_FILE}/content",
        GET=Op(file_content, content={"application/octet-stream": BINARY}),
    ),
]
