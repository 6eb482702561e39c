"""``/v1/batches`` (the ``openai`` SDK's ``client.batches``): create a batch of requests from an
input file, read, list and cancel it (:mod:`agentloom.batches`)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from agentloom.api.batches import Batch, CreateBatchRequest
from agentloom.api.lists import ListPage
from agentloom.batches.service import BatchesService
from agentloom.errors import InvalidRequestError
from agentloom.server.body import parse_body
from agentloom.server.query import limit_param, optional_param
from agentloom.server.render import json_response
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import AFTER, LIMIT, ApiRoute, Op

BATCH = "/v1/batches/{batch_id}"


def _batches(request: Request) -> BatchesService:
    service = runtime_of(request).batches
    if service is None:
        raise InvalidRequestError("This server does not run batches.")
    return service


def _id(request: Request) -> str:
    value: str = request.path_params["batch_id"]
    return value


async def create(request: Request) -> Response:
    body = await parse_body(request, CreateBatchRequest)
    return json_response(await _batches(request).create(body))


async def list_batches(request: Request) -> Response:
    params = request.query_params
    page = await _batches(request).list(optional_param(params, "after"), limit_param(params))
    return json_response(page)


async def retrieve(request: Request) -> Response:
    return json_response(await _batches(request).get(_id(request)))


async def cancel(request: Request) -> Response:
    return json_response(await _batches(request).cancel(_id(request)))


routes = [
    ApiRoute(
        "/v1/batches",
        GET=Op(list_batches, returns=ListPage[Batch], query=(AFTER, LIMIT)),
        POST=Op(create, body=CreateBatchRequest, returns=Batch),
    ),
    ApiRoute(BATCH, GET=Op(retrieve, returns=Batch)),
    ApiRoute(
        BATCH + "/cancel",
        POST=Op(cancel, returns=Batch, summary="Cancel a batch"),
    ),
]
