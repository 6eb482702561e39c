"""``/v1/responses``: create (JSON or SSE), retrieve, delete, list, input items, cancel."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentloom.api.compaction import CompactRequest
from agentloom.api.requests import CreateResponseRequest
from agentloom.api.token_count import InputTokenCount, InputTokensRequest
from agentloom.engine.service import ItemPageQuery
from agentloom.errors import InvalidRequestError
from agentloom.server.body import parse_body, parse_body_and_raw
from agentloom.server.query import include_param, limit_param, optional_param, order_param
from agentloom.server.render import json_response
from agentloom.server.routes.methods import by_method
from agentloom.server.runtime import runtime_of
from agentloom.server.sse import EventStream, encode_relayed, encode_stored, encode_stream
from agentloom.services.responses_gateway import ResponsesGateway
from agentloom.services.responses_relay import Relay
from agentloom.storage.events import StoredEvent

TOKEN_COUNT_METHOD = "x-agentloom-token-count-method"


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
        return json_response(await runtime.responses.collect(prepared))
    finally:
        await runtime.responses.discard(prepared)


async def _passed_through(
    gateway: ResponsesGateway, body: CreateResponseRequest, raw: bytes
) -> Response:
    """To the model's backend's own Responses API (:mod:`agentloom.services.responses_gateway`)."""
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
        after = _starting_after(request)
        events = runtime.background.follow(response_id, after)
        first = await anext(events, None)  # its mistakes (404, not background) as errors

        async def frames() -> AsyncIterator[StoredEvent]:
            if first is not None:
                yield first
                async for event in events:
                    yield event

        return _sse(encode_stored(frames()))
    return json_response(await runtime.responses.get(response_id))


def _starting_after(request: Request) -> int:
    raw = request.query_params.get("starting_after")
    if raw is None:
        return -1
    if not raw.isdigit():
        raise InvalidRequestError(
            f"Invalid 'starting_after': expected a sequence number, got '{raw}'.",
            param="starting_after",
            code="invalid_value",
        )
    return int(raw)


async def delete_response(request: Request) -> Response:
    runtime = runtime_of(request)
    return json_response(await runtime.responses.delete(request.path_params["response_id"]))


async def cancel_response(request: Request) -> Response:
    runtime = runtime_of(request)
    return json_response(await runtime.background.cancel(request.path_params["response_id"]))


async def list_responses(request: Request) -> Response:
    runtime = runtime_of(request)
    params = request.query_params
    page = await runtime.responses.list(
        after=optional_param(params, "after"),
        limit=limit_param(params),
        order=order_param(params),
        model=optional_param(params, "model"),
    )
    return json_response(page)


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


routes = [
    Route("/v1/responses/compact", compact_response, methods=["POST"]),
    Route("/v1/responses/input_tokens", count_input_tokens, methods=["POST"]),
    Route(
        "/v1/responses",
        by_method(GET=list_responses, POST=create_response),
        methods=["GET", "POST"],
    ),
    Route(
        "/v1/responses/{response_id}",
        by_method(GET=retrieve_response, DELETE=delete_response),
        methods=["GET", "DELETE"],
    ),
    Route("/v1/responses/{response_id}/cancel", cancel_response, methods=["POST"]),
    Route("/v1/responses/{response_id}/input_items", list_input_items, methods=["GET"]),
]
