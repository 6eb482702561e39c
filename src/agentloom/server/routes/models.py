"""``/v1/models`` and ``/v1/health``."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agentloom.api.lists import ModelList, ModelObject
from agentloom.inference.catalog import ServedModel
from agentloom.server.render import json_response
from agentloom.server.runtime import runtime_of


def _model_object(model: ServedModel) -> ModelObject:
    return ModelObject(id=model.id, created=model.info.created, owned_by=model.provider_name)


async def list_models(request: Request) -> Response:
    models = runtime_of(request).catalog.models()
    return json_response(ModelList(data=[_model_object(m) for m in models]))


async def retrieve_model(request: Request) -> Response:
    model_id = request.path_params["model_id"]
    resolved = await runtime_of(request).catalog.resolve(model_id, use=False)
    return json_response(_model_object(resolved.model))


async def health(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


routes = [
    Route("/v1/models", list_models, methods=["GET"]),
    Route("/v1/models/{model_id:path}", retrieve_model, methods=["GET"]),
    Route("/v1/health", health, methods=["GET"]),
]
