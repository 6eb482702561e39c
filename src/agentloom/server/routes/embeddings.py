"""``POST /v1/embeddings``: OpenAI's Embeddings API on the served embedding models."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from agentloom.api.embeddings import CreateEmbeddingResponse, EmbeddingsRequest
from agentloom.offload import off_loop
from agentloom.server.body import parse_body
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import ApiRoute, Op
from agentloom.services.gateway.embeddings import OFF_LOOP_VALUES


async def create_embeddings(request: Request) -> Response:
    body = await parse_body(request, EmbeddingsRequest)
    answer = await runtime_of(request).embeddings.create(body)
    values = sum(len(item.embedding) for item in answer.data)  # floats, or base64 characters
    content = await off_loop(values >= OFF_LOOP_VALUES, answer.model_dump_json)
    return Response(content, media_type="application/json")


routes = [
    ApiRoute(
        "/v1/embeddings",
        POST=Op(create_embeddings, body=EmbeddingsRequest, returns=CreateEmbeddingResponse),
    )
]
