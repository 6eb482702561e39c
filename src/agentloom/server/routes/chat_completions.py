"""``POST /v1/chat/completions`` (and the legacy ``POST /v1/completions``): passed through to
the model's backend (:mod:`agentloom.services.gateway.chat`)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from agentloom.api.chat_completions import ChatCompletionRequest, CompletionRequest
from agentloom.inference.base import CHAT_PATH, COMPLETIONS_PATH
from agentloom.server.body import parse_passed_body
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import ApiRoute, Op
from agentloom.server.sse import EventStream, encode_data


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


_PASSED = "The backend's answer, passed on as it came (OpenAI's shape)."

routes = [
    ApiRoute(
        "/v1/chat/completions",
        POST=Op(
            create_chat_completion,
            body=ChatCompletionRequest,
            returns=dict[str, Any],
            stream=dict[str, Any],
            description=_PASSED,
        ),
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
