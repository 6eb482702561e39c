"""``/v1/prompts``: reusable prompt templates and their versions."""

from __future__ import annotations

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response

from agentloom.api.lists import ListPage
from agentloom.api.prompts import (
    MAX_VERSION,
    CreatePromptRequest,
    DeletedPrompt,
    Prompt,
    SetDefaultVersionRequest,
    UpdatePromptRequest,
)
from agentloom.errors import InvalidRequestError
from agentloom.server.body import parse_body
from agentloom.server.query import limit_param, optional_param, order_param
from agentloom.server.render import json_response
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import PAGE, ApiRoute, Op, Param
from agentloom.services.prompts import PromptsService


def _prompts(request: Request) -> PromptsService:
    return runtime_of(request).prompts


def _prompt_id(request: Request) -> str:
    prompt_id: str = request.path_params["prompt_id"]
    return prompt_id


def version_param(params: QueryParams) -> int | None:
    raw = params.get("version")
    if raw is None:
        return None
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 10 and 1 <= int(raw) <= MAX_VERSION):
        raise InvalidRequestError(
            f"Invalid 'version': expected a positive integer, got '{raw}'.",
            param="version",
            code="invalid_value",
        )
    return int(raw)


async def create_prompt(request: Request) -> Response:
    body = await parse_body(request, CreatePromptRequest)
    return json_response(await _prompts(request).create(body))


async def list_prompts(request: Request) -> Response:
    params = request.query_params
    page = await _prompts(request).list(
        after=optional_param(params, "after"),
        limit=limit_param(params),
        order=order_param(params),
    )
    return json_response(page)


async def retrieve_prompt(request: Request) -> Response:
    version = version_param(request.query_params)
    return json_response(await _prompts(request).get(_prompt_id(request), version))


async def update_prompt(request: Request) -> Response:
    body = await parse_body(request, UpdatePromptRequest)
    return json_response(await _prompts(request).update(_prompt_id(request), body))


async def delete_prompt(request: Request) -> Response:
    return json_response(await _prompts(request).delete(_prompt_id(request)))


async def list_versions(request: Request) -> Response:
    return json_response(await _prompts(request).versions(_prompt_id(request)))


async def set_default_version(request: Request) -> Response:
    body = await parse_body(request, SetDefaultVersionRequest)
    return json_response(await _prompts(request).set_default(_prompt_id(request), body.version))


_VERSION = Param(
    "version",
    {"type": "integer", "minimum": 1, "maximum": MAX_VERSION},
    "A version of the prompt (default: its default version).",
)

routes = [
    ApiRoute(
        "/v1/prompts",
        GET=Op(list_prompts, returns=ListPage[Prompt], query=PAGE),
        POST=Op(create_prompt, body=CreatePromptRequest, returns=Prompt),
    ),
    ApiRoute(
        "/v1/prompts/{prompt_id}",
        GET=Op(retrieve_prompt, returns=Prompt, query=(_VERSION,)),
        POST=Op(update_prompt, body=UpdatePromptRequest, returns=Prompt),
        DELETE=Op(delete_prompt, returns=DeletedPrompt),
    ),
    ApiRoute("/v1/prompts/{prompt_id}/versions", GET=Op(list_versions, returns=ListPage[Prompt])),
    ApiRoute(
        "/v1/prompts/{prompt_id}/set-default-version",
        POST=Op(set_default_version, body=SetDefaultVersionRequest, returns=Prompt),
    ),
]
