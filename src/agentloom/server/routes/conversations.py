"""``/v1/conversations``: conversations and their items."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentloom.api.conversations import (
    AddItemsRequest,
    CreateConversationRequest,
    UpdateConversationRequest,
)
from agentloom.server.body import parse_body
from agentloom.server.query import include_param, limit_param, optional_param, order_param
from agentloom.server.render import json_response
from agentloom.server.routes.methods import by_method
from agentloom.server.runtime import runtime_of
from agentloom.services.conversations import ItemQuery


async def create_conversation(request: Request) -> Response:
    runtime = runtime_of(request)
    body = await parse_body(request, CreateConversationRequest, empty="{}")
    return json_response(await runtime.conversations.create(body))


async def retrieve_conversation(request: Request) -> Response:
    runtime = runtime_of(request)
    return json_response(await runtime.conversations.get(request.path_params["conversation_id"]))


async def update_conversation(request: Request) -> Response:
    runtime = runtime_of(request)
    body = await parse_body(request, UpdateConversationRequest)
    conversation_id = request.path_params["conversation_id"]
    return json_response(await runtime.conversations.update(conversation_id, body))


async def delete_conversation(request: Request) -> Response:
    runtime = runtime_of(request)
    conversation_id = request.path_params["conversation_id"]
    return json_response(await runtime.conversations.delete(conversation_id))


async def add_items(request: Request) -> Response:
    runtime = runtime_of(request)
    include_param(request.query_params)
    body = await parse_body(request, AddItemsRequest)
    conversation_id = request.path_params["conversation_id"]
    return json_response(await runtime.conversations.add_items(conversation_id, body))


async def list_items(request: Request) -> Response:
    runtime = runtime_of(request)
    params = request.query_params
    include_param(params)
    query = ItemQuery(
        after=optional_param(params, "after"),
        limit=limit_param(params),
        order=order_param(params),
    )
    conversation_id = request.path_params["conversation_id"]
    return json_response(await runtime.conversations.list_items(conversation_id, query))


async def retrieve_item(request: Request) -> Response:
    runtime = runtime_of(request)
    include_param(request.query_params)
    conversation_id, item_id = (
        request.path_params["conversation_id"],
        request.path_params["item_id"],
    )
    return json_response(await runtime.conversations.get_item(conversation_id, item_id))


async def delete_item(request: Request) -> Response:
    runtime = runtime_of(request)
    conversation_id, item_id = (
        request.path_params["conversation_id"],
        request.path_params["item_id"],
    )
    return json_response(await runtime.conversations.delete_item(conversation_id, item_id))


routes = [
    Route("/v1/conversations", create_conversation, methods=["POST"]),
    Route(
        "/v1/conversations/{conversation_id}",
        by_method(GET=retrieve_conversation, POST=update_conversation, DELETE=delete_conversation),
        methods=["GET", "POST", "DELETE"],
    ),
    Route(
        "/v1/conversations/{conversation_id}/items",
        by_method(GET=list_items, POST=add_items),
        methods=["GET", "POST"],
    ),
    Route(
        "/v1/conversations/{conversation_id}/items/{item_id}",
        by_method(GET=retrieve_item, DELETE=delete_item),
        methods=["GET", "DELETE"],
    ),
]
