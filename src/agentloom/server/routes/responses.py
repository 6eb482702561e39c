"""``/v1/responses``: create (JSON or SSE), retrieve, delete, list, input items, cancel, and
agentloom's trace of a stored response. Llama Stack's clients find create, list, retrieve,
delete and input items at ``/v1/agents/responses`` too: aliases of the same routes."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import cast, get_args

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response

from agentloom.api.compaction import CompactedResponse, CompactRequest
from agentloom.api.events import StreamEvent
from agentloom.api.items import StoredItem
from agentloom.api.lists import ListPage
from agentloom.api.requests import CreateResponseRequest
from agentloom.api.response import DeletedResponse
from agentloom.api.response import Response as ResponseObject
from agentloom.api.token_count import InputTokenCount, InputTokensRequest
from agentloom.api.traces import ResponseTrace
from agentloom.inference.base import TokenCountMethod
from agentloom.responses.gateway import ResponsesGateway
from agentloom.responses.relay import Relay
from agentloom.responses.service import ItemPageQuery
from agentloom.server.body import parse_body, parse_body_and_raw
from agentloom.server.query import (
    MAX_SEQUENCE,
    choice_param,
    include_param,
    limit_param,
    metadata_params,
    optional_param,
    order_param,
    starting_after_param,
    unix_seconds_param,
)
from agentloom.server.render import json_response
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import (
    AFTER,
    BEFORE,
    INCLUDE,
    LIMIT,
    ORDER,
    PAGE,
    ApiRoute,
    Op,
    Param,
    unix_seconds,
)
from agentloom.server.sse import EventStream, encode_relayed, encode_stored, encode_stream
from agentloom.storage.base import ResponseQuery, ResponseStatus
from agentloom.storage.events import StoredEvent

TOKEN_COUNT_METHOD = "x-agentloom-token-count-method"
STATUSES = get_args(ResponseStatus)


async def create_response(request: Request) -> Response:
    runtime = runtime_of(request)
    body, raw = await parse_body_and_raw(request, CreateResponseRequest)
    if await runtime.native.serves(body):
        return await _passed_through(runtime.native, body, raw)
    if body.background:
        return await _create_in_background(request, body)
    prepared = await runtime.responses.prepare(body)
    if body.stream:
        events = runtime.responses.stream(prepared)
        return EventStream(
            encode_stream(events),
            # A client gone before the stream started never runs it: release what it holds.
            background=BackgroundTask(runtime.responses.discard, prepared),
        )
    try:
        reply = await runtime.responses.collect_json(prepared)
        return Response(reply, media_type="application/json")
    finally:
        await runtime.responses.discard(prepared)


async def _passed_through(
    gateway: ResponsesGateway, body: CreateResponseRequest, raw: bytes
) -> Response:
    """To the model's backend's own Responses API (:mod:`agentloom.responses.gateway`)."""
    call = await gateway.call(body, raw)
    if not body.stream:
        return Response(await gateway.create(call), media_type="application/json")
    first, rest = await gateway.open(call)
    return _sse(encode_relayed(Relay(gateway, call).events(first, rest)))


async def _create_in_background(request: Request, body: CreateResponseRequest) -> Response:
    """Queued at once; streamed (when asked) as its job makes it, from any process. Losing
    this connection does not cancel it."""
    background = runtime_of(request).background
    response = await background.create(body)
    if body.stream:
        return _sse(encode_stored(background.follow(response.id)))
    return json_response(response)


def _sse(frames: AsyncGenerator[bytes, None]) -> EventStream:
    return EventStream(frames)


async def compact_response(request: Request) -> Response:
    runtime = runtime_of(request)
    body = await parse_body(request, CompactRequest)
    return json_response(await runtime.responses.compact(body))


async def count_input_tokens(request: Request) -> Response:
    runtime = runtime_of(request)
    body = await parse_body(request, InputTokensRequest, empty="{}")
    count = await runtime.responses.count_input_tokens(body)
    reply = json_response(InputTokenCount(input_tokens=count.tokens))
    reply.headers[TOKEN_COUNT_METHOD] = count.method  # how the count was made
    return reply


async def retrieve_response(request: Request) -> Response:
    include_param(request.query_params)
    runtime = runtime_of(request)
    response_id = request.path_params["response_id"]
    if request.query_params.get("stream") in ("true", "1"):
        after = starting_after_param(request.query_params, "a sequence number")
        events = runtime.background.follow(response_id, after)
        first = await anext(events, None)  # its mistakes (404, not background) as errors

        async def frames() -> AsyncIterator[StoredEvent]:
            if first is not None:
                yield first
                async for event in events:
                    yield event

        return _sse(encode_stored(frames()))
    return json_response(await runtime.responses.get(response_id))


async def response_trace(request: Request) -> Response:
    runtime = runtime_of(request)
    return json_response(await runtime.responses.trace(request.path_params["response_id"]))


async def delete_response(request: Request) -> Response:
    runtime = runtime_of(request)
    return json_response(await runtime.responses.delete(request.path_params["response_id"]))


async def cancel_response(request: Request) -> Response:
    runtime = runtime_of(request)
    return json_response(await runtime.background.cancel(request.path_params["response_id"]))


async def list_responses(request: Request) -> Response:
    runtime = runtime_of(request)
    params = request.query_params
    query = ResponseQuery(
        after=optional_param(params, "after"),
        limit=limit_param(params),
        order=order_param(params),
        model=optional_param(params, "model"),
        status=cast(ResponseStatus | None, choice_param(params, "status", STATUSES)),
        created_after=unix_seconds_param(params, "created_after"),
        created_before=unix_seconds_param(params, "created_before"),
        metadata=metadata_params(params),
    )
    return json_response(await runtime.responses.list(query))


async def list_input_items(request: Request) -> Response:
    runtime = runtime_of(request)
    params = request.query_params
    include_param(params)
    query = ItemPageQuery(
        after=optional_param(params, "after"),
        before=optional_param(params, "before"),
        limit=limit_param(params),
        order=order_param(params),
    )
    page = await runtime.responses.input_items(request.path_params["response_id"], query)
    return json_response(page)


_STREAM_PARAMS = (
    INCLUDE,
    Param(
        "stream",
        {"type": "boolean"},
        "Stream a background response's events (stored ones first, then as they are made).",
    ),
    Param(
        "starting_after",
        {"type": "integer", "minimum": 0, "maximum": MAX_SEQUENCE},
        "With stream: start after the event with this sequence number.",
    ),
)
_LIST_PARAMS = (
    *PAGE,
    Param("model", {"type": "string"}, "Only responses of this model."),
    Param("status", {"type": "string", "enum": list(STATUSES)}, "Only responses in this status."),
    unix_seconds("created_after", "Only responses created at or after this time (unix seconds)."),
    unix_seconds("created_before", "Only responses created before this time (unix seconds)."),
    Param(
        "metadata",
        {"type": "object", "additionalProperties": {"type": "string"}},
        "Only responses whose metadata has each pair given as `metadata[key]=value`"
        " (any number of them, all must match).",
    ),
)
_TOKEN_COUNT_HEADERS = {
    TOKEN_COUNT_METHOD: {"type": "string", "enum": list(get_args(TokenCountMethod))}
}

routes = [
    ApiRoute(
        "/v1/responses/compact",
        POST=Op(compact_response, body=CompactRequest, returns=CompactedResponse),
    ),
    ApiRoute(
        "/v1/responses/input_tokens",
        POST=Op(
            count_input_tokens,
            body=InputTokensRequest,
            empty_body=True,
            returns=InputTokenCount,
            headers=_TOKEN_COUNT_HEADERS,
        ),
    ),
    ApiRoute(
        "/v1/responses",
        GET=Op(
            list_responses,
            returns=ListPage[ResponseObject],
            query=_LIST_PARAMS,
        ),
        POST=Op(
            create_response,
            body=CreateResponseRequest,
            returns=ResponseObject,
            stream=StreamEvent,
            description="With `stream: true` the response's events stream as they are made.",
        ),
    ),
    ApiRoute(
        "/v1/responses/{response_id}",
        GET=Op(retrieve_response, returns=ResponseObject, stream=StreamEvent, query=_STREAM_PARAMS),
        DELETE=Op(delete_response, returns=DeletedResponse),
    ),
    ApiRoute(
        "/v1/responses/{response_id}/cancel", POST=Op(cancel_response, returns=ResponseObject)
    ),
    ApiRoute(
        "/v1/responses/{response_id}/trace",
        GET=Op(
            response_trace,
            returns=ResponseTrace,
            summary="Get a stored response's trace (agentloom)",
            description="The run of a stored response as a timeline: the whole run, each model "
            "call, server tool call, guardrail check and compaction, times in milliseconds "
            "from its start. Recorded whether or not OpenTelemetry traces are on, stored with "
            "the response's final state. 404 `trace_not_ready` while the response is queued "
            "or in progress; 404 `trace_not_found` when none was recorded.",
        ),
    ),
    ApiRoute(
        "/v1/responses/{response_id}/input_items",
        GET=Op(
            list_input_items,
            returns=ListPage[StoredItem],
            query=(INCLUDE, AFTER, BEFORE, LIMIT, ORDER),
        ),
    ),
]

LLAMA_STACK_PREFIX = "/v1/agents/responses"
"""Where Llama Stack serves its Responses API (``POST /agents/responses`` ... under ``/v1``)."""
_LLAMA_STACK_ROUTES = (
    "/v1/responses",
    "/v1/responses/{response_id}",
    "/v1/responses/{response_id}/input_items",
)
routes += [
    route.aliased(LLAMA_STACK_PREFIX + route.path.removeprefix("/v1/responses"), by="Llama Stack")
    for route in routes
    if route.path in _LLAMA_STACK_ROUTES
]
