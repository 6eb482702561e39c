"""``/v1/vector_stores``: stores, their files, file batches and search.

File and batch objects carry an ``openai-poll-after-ms`` header: the SDK's ``*_and_poll``
helpers wait that long between retrievals (instead of a second).
"""

from __future__ import annotations

from pydantic import BaseModel
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response

from agentloom.api.lists import ListPage
from agentloom.api.vector_store_search import SearchRequest, SearchResultsPage
from agentloom.api.vector_stores import (
    CreateFileBatchRequest,
    CreateVectorStoreFileRequest,
    CreateVectorStoreRequest,
    FileContentPage,
    UpdateVectorStoreFileRequest,
    UpdateVectorStoreRequest,
    VectorStore,
    VectorStoreDeleted,
    VectorStoreFile,
    VectorStoreFileBatch,
    VectorStoreFileDeleted,
)
from agentloom.errors import InvalidRequestError
from agentloom.server.body import parse_body
from agentloom.server.query import limit_param, optional_param, order_param
from agentloom.server.render import json_response
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import AFTER, BEFORE, LIMIT, ORDER, ApiRoute, JsonSchema, Op, Param
from agentloom.services.vector_stores.files import VectorStoreFiles
from agentloom.services.vector_stores.service import VectorStoresService
from agentloom.storage.vector_stores_base import FILE_STATUSES, Cursor, FileStatus


def _service(request: Request) -> VectorStoresService:
    return runtime_of(request).vector_stores


def _files(request: Request) -> VectorStoreFiles:
    return _service(request).files


def _path(request: Request, name: str) -> str:
    value: str = request.path_params[name]
    return value


def _store_id(request: Request) -> str:
    return _path(request, "vector_store_id")


def _polled(request: Request, model: BaseModel) -> Response:
    response = json_response(model)
    response.headers["openai-poll-after-ms"] = str(_service(request).settings.poll_after_ms)
    return response


def cursor_param(params: QueryParams) -> Cursor:
    return Cursor(
        after=optional_param(params, "after"),
        before=optional_param(params, "before"),
        limit=limit_param(params),
        order=order_param(params),
    )


def status_param(params: QueryParams) -> FileStatus | None:
    raw = optional_param(params, "filter")
    if raw is None:
        return None
    for status in FILE_STATUSES:
        if raw == status:
            return status
    raise InvalidRequestError(
        f"Invalid 'filter': expected one of {', '.join(FILE_STATUSES)}, got '{raw[:100]}'.",
        param="filter",
        code="invalid_value",
    )


# --- stores ----------------------------------------------------------------------------------


async def create_store(request: Request) -> Response:
    body = await parse_body(request, CreateVectorStoreRequest, empty="{}")
    return json_response(await _service(request).create(body))


async def list_stores(request: Request) -> Response:
    return json_response(await _service(request).list_stores(cursor_param(request.query_params)))


async def retrieve_store(request: Request) -> Response:
    return json_response(await _service(request).get(_store_id(request)))


async def update_store(request: Request) -> Response:
    body = await parse_body(request, UpdateVectorStoreRequest, empty="{}")
    return json_response(await _service(request).update(_store_id(request), body))


async def delete_store(request: Request) -> Response:
    return json_response(await _service(request).delete(_store_id(request)))


async def search(request: Request) -> Response:
    body = await parse_body(request, SearchRequest)
    return json_response(await _service(request).search_page(_store_id(request), body))


# --- files -----------------------------------------------------------------------------------


async def add_file(request: Request) -> Response:
    body = await parse_body(request, CreateVectorStoreFileRequest)
    return _polled(request, await _files(request).add(_store_id(request), body))


async def list_files(request: Request) -> Response:
    params = request.query_params
    page = await _files(request).list_files(
        _store_id(request), cursor_param(params), status_param(params)
    )
    return json_response(page)


async def retrieve_file(request: Request) -> Response:
    found = await _files(request).get(_store_id(request), _path(request, "file_id"))
    return _polled(request, found)


async def update_file(request: Request) -> Response:
    body = await parse_body(request, UpdateVectorStoreFileRequest)
    updated = await _files(request).update(_store_id(request), _path(request, "file_id"), body)
    return json_response(updated)


async def delete_file(request: Request) -> Response:
    removed = await _files(request).remove(_store_id(request), _path(request, "file_id"))
    return json_response(removed)


async def file_content(request: Request) -> Response:
    page = await _files(request).content(_store_id(request), _path(request, "file_id"))
    return json_response(page)


# --- batches ---------------------------------------------------------------------------------


async def create_batch(request: Request) -> Response:
    body = await parse_body(request, CreateFileBatchRequest)
    return _polled(request, await _files(request).create_batch(_store_id(request), body))


async def retrieve_batch(request: Request) -> Response:
    found = await _files(request).get_batch(_store_id(request), _path(request, "batch_id"))
    return _polled(request, found)


async def cancel_batch(request: Request) -> Response:
    cancelled = await _files(request).cancel_batch(_store_id(request), _path(request, "batch_id"))
    return json_response(cancelled)


async def list_batch_files(request: Request) -> Response:
    params = request.query_params
    page = await _files(request).list_batch_files(
        _store_id(request),
        _path(request, "batch_id"),
        cursor_param(params),
        status_param(params),
    )
    return json_response(page)


_STORE = "/v1/vector_stores/{vector_store_id}"
_FILE = _STORE + "/files/{file_id}"
_BATCH = _STORE + "/file_batches/{batch_id}"
_CURSOR = (AFTER, BEFORE, LIMIT, ORDER)
_FILTERED = (
    *_CURSOR,
    Param("filter", {"type": "string", "enum": list(FILE_STATUSES)}, "Only files of this status."),
)
_POLL: dict[str, JsonSchema] = {"openai-poll-after-ms": {"type": "string"}}

routes = [
    ApiRoute(
        "/v1/vector_stores",
        GET=Op(list_stores, returns=ListPage[VectorStore], query=_CURSOR),
        POST=Op(create_store, body=CreateVectorStoreRequest, empty_body=True, returns=VectorStore),
    ),
    ApiRoute(
        _STORE,
        GET=Op(retrieve_store, returns=VectorStore),
        POST=Op(update_store, body=UpdateVectorStoreRequest, empty_body=True, returns=VectorStore),
        DELETE=Op(delete_store, returns=VectorStoreDeleted),
    ),
    ApiRoute(_STORE + "/search", POST=Op(search, body=SearchRequest, returns=SearchResultsPage)),
    ApiRoute(
        _STORE + "/files",
        GET=Op(list_files, returns=ListPage[VectorStoreFile], query=_FILTERED),
        POST=Op(
            add_file, body=CreateVectorStoreFileRequest, returns=VectorStoreFile, headers=_POLL
        ),
    ),
    ApiRoute(
        _FILE,
        GET=Op(retrieve_file, returns=VectorStoreFile, headers=_POLL),
        POST=Op(update_file, body=UpdateVectorStoreFileRequest, returns=VectorStoreFile),
        DELETE=Op(delete_file, returns=VectorStoreFileDeleted),
    ),
    ApiRoute(_FILE + "/content", GET=Op(file_content, returns=FileContentPage)),
    ApiRoute(
        _STORE + "/file_batches",
        POST=Op(
            create_batch, body=CreateFileBatchRequest, returns=VectorStoreFileBatch, headers=_POLL
        ),
    ),
    ApiRoute(_BATCH, GET=Op(retrieve_batch, returns=VectorStoreFileBatch, headers=_POLL)),
    ApiRoute(_BATCH + "/cancel", POST=Op(cancel_batch, returns=VectorStoreFileBatch)),
    ApiRoute(
        _BATCH + "/files",
        GET=Op(list_batch_files, returns=ListPage[VectorStoreFile], query=_FILTERED),
    ),
]
