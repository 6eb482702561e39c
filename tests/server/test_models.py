"""``/v1/models`` and ``/v1/health`` in OpenAI's shape, through the official client."""

from __future__ import annotations

import httpx2
import openai
import pytest

from agentloom.testing.backend import FakeBackend
from tests.plugins.server import FAKE_EMBEDDING_MODEL


async def test_each_model_is_listed_once(client: openai.AsyncOpenAI, backend: FakeBackend) -> None:
    """A model is served under its id and ``provider/id`` (both answer, below) but listed once,
    by its id."""
    models = [model.id async for model in client.models.list()]

    assert models[:1] == [backend.model]
    assert models[1:] == [FAKE_EMBEDDING_MODEL, "all-MiniLM-L6-v2"]  # the embedding models


async def test_each_model_says_its_kind(client: openai.AsyncOpenAI, backend: FakeBackend) -> None:
    """``kind`` (an agentloom extension) reaches the client's model objects as a field of
    their own: the console offers only the chat models."""
    kinds = {model.id: model.model_extra async for model in client.models.list()}
    embedding = await client.models.retrieve(FAKE_EMBEDDING_MODEL)

    assert kinds == {
        backend.model: {"kind": "chat"},
        FAKE_EMBEDDING_MODEL: {"kind": "embeddings"},
        "all-MiniLM-L6-v2": {"kind": "embeddings"},
    }
    assert getattr(embedding, "kind", None) == "embeddings"
    assert (await client.models.retrieve(backend.model)).to_dict()["kind"] == "chat"


async def test_retrieve_a_model(client: openai.AsyncOpenAI, backend: FakeBackend) -> None:
    for model_id in (backend.model, f"fake/{backend.model}"):
        model = await client.models.retrieve(model_id)
        assert model.id == model_id
        assert model.object == "model"
        assert isinstance(model.created, int)
        assert model.owned_by


async def test_an_unknown_model_is_a_404(client: openai.AsyncOpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        await client.models.retrieve("no-such-model")

    assert caught.value.code == "model_not_found"


async def test_a_provider_prefixed_model_answers(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    response = await client.responses.create(model=f"fake/{backend.model}", input="Echo me")

    assert response.model == f"fake/{backend.model}"
    assert backend.last_request["model"] == backend.model


async def test_health(http: httpx2.AsyncClient) -> None:
    reply = await http.get("/health")

    assert reply.status_code == 200
    assert reply.json() == {"status": "ok"}
