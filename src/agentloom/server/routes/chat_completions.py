"""``POST /v1/chat/completions`` (and the legacy ``POST /v1/completions``): passed through to
the model's backend (:mod:`agentloom.services.gateway.chat`); the completions created with
``store: true`` listed, read, updated and deleted, with their request's messages
(:mod:`agentloom.services.gateway.stored`)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from agentloom import json_codec
from agentloom.api.chat_completions import (
    ChatCompletionRequest,
    CompletionRequest,
    StoredCompletionDeleted,
    StoredCompletionList,
    StoredMessageList,
    UpdateStoredCompletionRequest,
)
from agentloom.errors import InvalidRequestError
from agentloom.inference.base import CHAT_PATH, COMPLETIONS_PATH
from agentloom.server.body import parse_body, parse_passed_body
from agentloom.server.query import limit_param, metadata_params, optional_param, order_param
from agentloom.server.render import json_response
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import PAGE, ApiRoute, Op, Param
from agentloom.server.sse import EventStream, encode_data
from agentloom.services.gateway.stored import StoredCompletions
from agentloom.storage.chat_completions import CompletionQuery


async def create_chat_completion(request: Request) -> Response:
    parsed, body = await parse_passed_body(request, ChatCompletionRequest)
    return await _passed(request, parsed, body, CHAT_PATH)


async def create_completion(request: Request) -> Response:
    parsed, body = await parse_passed_body(request, CompletionRequest)
    return await _passed(request, parsed, body, COMPLETIONS_PATH)


async def _passed(
    request: Request,
    parsed: ChatCompletionRequest | CompletionRequest,
    body: dict[str, object],
    path: str,
) -> Response:
    gateway = runtime_of(request).chat
    if parsed.stream:
        payloads = await gateway.stream(parsed, body, path)
        return EventStream(encode_data(payloads))
    return Response(await gateway.complete(parsed, body, path), media_type="application/json")


def _stored(request: Request) -> StoredCompletions:
    stored = runtime_of(request).stored_completions
    if stored is None:
        raise InvalidRequestError("This server does not store chat completions.")
    return stored


def _completion_id(request: Request) -> str:
    return str(request.path_params["completion_id"])


async def list_stored(request: Request) -> Response:
    params = request.query_params
    query = CompletionQuery(
        after=optional_param(params, "after"),
        limit=limit_param(params),
        order=order_param(params, default="asc"),
        model=optional_param(params, "model"),
        metadata=dict(metadata_params(params)),
    )
    return json_response(await _stored(request).list(query))


async def retrieve_stored(request: Request) -> Response:
    return _json(await _stored(request).get(_completion_id(request)))


async def update_stored(request: Request) -> Response:
    body = await parse_body(request, UpdateStoredCompletionRequest)
    return _json(await _stored(request).update(_completion_id(request), body.metadata))


def _json(completion: dict[str, Any]) -> Response:
    """A stored completion: the backend's object as it was kept (not one of our models)."""
    return Response(json_codec.dumps(completion), media_type="application/json")


async def delete_stored(request: Request) -> Response:
    return json_response(await _stored(request).delete(_completion_id(request)))


async def list_messages(request: Request) -> Response:
    params = request.query_params
    page = await _stored(request).messages(
        _completion_id(request),
        after=optional_param(params, "after"),
        limit=limit_param(params),
        order=order_param(params, default="asc"),
    )
    return json_response(page)


_PASSED = "The backend's answer, passed on as it came (OpenAI's shape)."
_STORED_FILTERS = (
    *PAGE,
    Param("model", {"type": "string"}, "Only completions of this model."),
    Param(
        "metadata",
        {"type": "object", "additionalProperties": {"type": "string"}},
        "Only completions whose metadata has each pair given as `metadata[key]=value`.",
    ),
)

routes = [
    ApiRoute(
        "/v1/chat/completions",
        GET=Op(
            list_stored,
            returns=StoredCompletionList,
            query=_STORED_FILTERS,
            summary="Chat completions stored with `store: true` (oldest first by default)",
        ),
        POST=Op(
            create_chat_completion,
            body=ChatCompletionRequest,
            returns=dict[str, Any],
            stream=dict[str, Any],
            description=_PASSED,
        ),
    ),
    ApiRoute(
        "/v1/chat/completions/{completion_id}",
        GET=Op(retrieve_stored, returns=dict[str, Any]),
        POST=Op(update_stored, body=UpdateStoredCompletionRequest, returns=dict[str, Any]),
        DELETE=Op(delete_stored, returns=StoredCompletionDeleted),
    ),
    ApiRoute(
        "/v1/chat/completions/{completion_id}/messages",
        GET=Op(list_messages, returns=StoredMessageList, query=PAGE),
    ),
    ApiRoute(
        "/v1/completions",
        POST=Op(
            create_completion,
            body=CompletionRequest,
            returns=dict[str, Any],
            stream=dict[str, Any],
            description=_PASSED,
        ),
    ),
]
