"""``/v1/conversations``: conversations and their items."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from agentloom.api.conversations import (
    AddItemsRequest,
    Conversation,
    ConversationItemList,
    CreateConversationRequest,
    DeletedConversation,
    UpdateConversationRequest,
)
from agentloom.api.items import StoredItem
from agentloom.api.lists import ListPage
from agentloom.server.body import parse_body
from agentloom.server.query import include_param, limit_param, optional_param, order_param
from agentloom.server.render import json_response
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import INCLUDE, PAGE, ApiRoute, Op
from agentloom.services.conversations import ItemQuery

_LIST_NOTE = (
    "An agentloom extension (OpenAI's Conversations API lists none): the project's"
    " conversations, newest first unless `order=asc`, a page at a time (`after` a conversation's"
    " id)."
)


async def create_conversation(request: Request) -> Response:
    runtime = runtime_of(request)
    body = await parse_body(request, CreateConversationRequest, empty="{}")
    return json_response(await runtime.conversations.create(body))


async def list_conversations(request: Request) -> Response:
    runtime = runtime_of(request)
    params = request.query_params
    query = ItemQuery(
        after=optional_param(params, "after"),
        limit=limit_param(params),
        order=order_param(params),
    )
    return json_response(await runtime.conversations.list_page(query))


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
    ApiRoute(
        "/v1/conversations",
        GET=Op(
            list_conversations,
            returns=ListPage[Conversation],
            query=PAGE,
            description=_LIST_NOTE,
        ),
        POST=Op(
            create_conversation,
            body=CreateConversationRequest,
            empty_body=True,
            returns=Conversation,
        ),
    ),
    ApiRoute(
        "/v1/conversations/{conversation_id}",
        GET=Op(retrieve_conversation, returns=Conversation),
        POST=Op(update_conversation, body=UpdateConversationRequest, returns=Conversation),
        DELETE=Op(delete_conversation, returns=DeletedConversation),
    ),
    ApiRoute(
        "/v1/conversations/{conversation_id}/items",
        GET=Op(list_items, returns=ListPage[StoredItem], query=(INCLUDE, *PAGE)),
        POST=Op(add_items, body=AddItemsRequest, returns=ConversationItemList, query=(INCLUDE,)),
    ),
    ApiRoute(
        "/v1/conversations/{conversation_id}/items/{item_id}",
        GET=Op(retrieve_item, returns=StoredItem, query=(INCLUDE,)),
        DELETE=Op(delete_item, returns=Conversation),
    ),
]
