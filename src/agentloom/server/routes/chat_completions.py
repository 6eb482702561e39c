"""``POST /v1/chat/completions``: Chat Completions passed through to the model's backend."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from agentloom.api.chat_completions import ChatCompletionRequest
from agentloom.server.body import parse_passed_body
from agentloom.server.routes.responses import SSE_HEADERS
from agentloom.server.runtime import runtime_of
from agentloom.server.sse import encode_data


async def create_chat_completion(request: Request) -> Response:
    gateway = runtime_of(request).chat
    parsed, body = await parse_passed_body(request, ChatCompletionRequest)
    if parsed.stream:
        payloads = await gateway.stream(parsed, body)
        return StreamingResponse(
            encode_data(payloads), media_type="text/event-stream", headers=SSE_HEADERS
        )
    return Response(await gateway.complete(parsed, body), media_type="application/json")


routes = [Route("/v1/chat/completions", create_chat_completion, methods=["POST"])]
