"""Anthropic's Messages API (``POST /v1/messages``, ``POST /v1/messages/count_tokens``), served
by any backend (:mod:`agentloom.services.gateway.messages`). Keys come as ``x-api-key`` or
``Authorization: Bearer``; errors are in Anthropic's envelope (``server/errors.DIALECTS``),
streams in its event framing."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from agentloom import json_codec
from agentloom.api import anthropic as a
from agentloom.errors import AgentloomError, InvalidRequestError
from agentloom.server.body import parse_body
from agentloom.server.errors import anthropic_error_body
from agentloom.server.render import json_response
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import ApiRoute, Op
from agentloom.server.sse import EventStream, encode_named
from agentloom.services.gateway.messages import MessagesGateway


def _gateway(request: Request) -> MessagesGateway:
    gateway = runtime_of(request).messages
    if gateway is None:
        raise InvalidRequestError("The Messages API is not served here.")
    return gateway


async def create_message(request: Request) -> Response:
    body = await parse_body(request, a.MessagesRequest)
    gateway = _gateway(request)
    if body.stream:
        events = await gateway.stream(body)
        return EventStream(encode_named(events, _error_data))
    return json_response(await gateway.create(body))


async def count_tokens(request: Request) -> Response:
    body = await parse_body(request, a.CountTokensRequest)
    return json_response(await _gateway(request).count_tokens(body))


def _error_data(exc: AgentloomError) -> bytes:
    return json_codec.dumps(anthropic_error_body(exc))


routes = [
    ApiRoute(
        "/v1/messages",
        POST=Op(
            create_message,
            body=a.MessagesRequest,
            returns=a.Message,
            stream=dict[str, object],
            summary="Anthropic's Messages API, served by any backend",
            errors=a.AnthropicError,
        ),
    ),
    ApiRoute(
        "/v1/messages/count_tokens",
        POST=Op(
            count_tokens,
            body=a.CountTokensRequest,
            returns=a.TokenCount,
            errors=a.AnthropicError,
        ),
    ),
]
