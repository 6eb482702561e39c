"""``/v1/models``: the models of the catalog, then the embedding models served here, each once (a
model is listed by its shortest name: ``provider/model`` only where the plain name is another
provider's; both are accepted), each with its ``kind`` (an agentloom extension: a backend's
model is ``embeddings`` where its provider's ``embeddings`` patterns name it)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from agentloom.api.lists import ModelList, ModelObject
from agentloom.errors import NotFoundError
from agentloom.inference.catalog import ServedModel
from agentloom.retrieval.embedding_models import EmbeddingModelInfo
from agentloom.server.render import json_response
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import ApiRoute, Op


def _model_object(model: ServedModel) -> ModelObject:
    return ModelObject(
        id=model.id, created=model.info.created, owned_by=model.provider_name, kind=model.kind
    )


def _embedding_object(info: EmbeddingModelInfo, name: str) -> ModelObject:
    return ModelObject(id=name, created=0, owned_by=info.owned_by, kind="embeddings")


async def list_models(request: Request) -> Response:
    runtime = runtime_of(request)
    chat = [_model_object(m) for m in _once(runtime.catalog.models())]
    listed = {model.id for model in chat}
    embedding = [
        _embedding_object(info, info.id)
        for info in runtime.embeddings.models()
        if info.id not in listed
    ]
    return json_response(ModelList(data=[*chat, *embedding]))


def _once(models: list[ServedModel]) -> list[ServedModel]:
    """One entry a model (a provider's backend id): the one of its names that is shortest."""
    kept: dict[tuple[str, str], ServedModel] = {}
    for model in models:
        key = (model.provider_name, model.backend_id)
        if key not in kept or len(model.id) < len(kept[key].id):
            kept[key] = model
    return list(kept.values())


async def retrieve_model(request: Request) -> Response:
    model_id = request.path_params["model_id"]
    runtime = runtime_of(request)
    try:
        resolved = await runtime.catalog.resolve(model_id, use=False)
    except NotFoundError:
        return json_response(_embedding_object(runtime.embeddings.find(model_id), model_id))
    return json_response(_model_object(resolved.model))


routes = [
    ApiRoute("/v1/models", GET=Op(list_models, returns=ModelList)),
    ApiRoute("/v1/models/{model_id:path}", GET=Op(retrieve_model, returns=ModelObject)),
]
