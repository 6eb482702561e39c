"""The embeddings seam: configuration, the table of embedders, and the OpenAI-compatible HTTP
embedder against the fake backend over real HTTP (batching, dimensions, base64, normalisation,
upstream errors). The MiniLM model itself is tested in test_minilm.py."""

from __future__ import annotations

import base64
import socket
from collections.abc import AsyncIterator

import httpx2
import numpy as np
import pytest

from agentloom.config import ConfigError, EmbeddingSettings, load_settings
from agentloom.errors import (
    InternalError,
    UpstreamError,
    UpstreamRateLimitError,
    UpstreamRequestError,
)
from agentloom.retrieval.embeddings import (
    EMBEDDERS,
    MiniLMEmbedder,
    OpenAICompatibleEmbedder,
    build_embedder,
)
from agentloom.retrieval.openai_embeddings import _vectors
from agentloom.testing.backend import FakeBackend
from agentloom.testing.embeddings import embeddings_answer, hashed_embedding

TEXTS = [
    "the cat sat on the mat",
    "a cat on a mat",
    "stock prices fell sharply",
    "prices of stock",
    "",
    "seven",
    "eight nine",
]


def remote(backend: FakeBackend, **changes: object) -> EmbeddingSettings:
    fields: dict[str, object] = {
        "type": "openai_compatible",
        "base_url": backend.base_url,
        "model": "embed-small",
        "timeout": 5.0,
    }
    return EmbeddingSettings.model_validate(fields | changes)


@pytest.fixture
async def embedder(backend: FakeBackend) -> AsyncIterator[OpenAICompatibleEmbedder]:
    client = OpenAICompatibleEmbedder(remote(backend, batch_size=3))
    yield client
    await client.aclose()


# --- configuration ---------------------------------------------------------------------------


def test_default_is_the_embedded_model() -> None:
    settings = load_settings(env={})
    assert settings.embeddings.type == "minilm"
    assert isinstance(build_embedder(settings.embeddings), MiniLMEmbedder)
    assert set(EMBEDDERS) == {"minilm", "openai_compatible"}


def test_environment_selects_a_remote_embedder() -> None:
    env = {
        "AGENTLOOM_EMBEDDINGS_TYPE": "openai_compatible",
        "AGENTLOOM_EMBEDDINGS_BASE_URL": "http://127.0.0.1:9/v1",
        "AGENTLOOM_EMBEDDINGS_MODEL": "text-embedding-3-small",
    }
    embedder = build_embedder(load_settings(env=env).embeddings)
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    assert embedder.name == "openai:text-embedding-3-small"


def test_remote_embedder_needs_an_endpoint() -> None:
    with pytest.raises(ConfigError, match="base_url and model"):
        load_settings(env={"AGENTLOOM_EMBEDDINGS_TYPE": "openai_compatible"})


def test_api_key_from_the_environment() -> None:
    settings = EmbeddingSettings(
        type="openai_compatible", base_url="http://x/v1", model="m", api_key_env="EMBED_KEY"
    )
    assert settings.resolved_api_key({"EMBED_KEY": "sk-1"}) == "sk-1"
    assert settings.resolved_api_key({}) is None


# --- the HTTP embedder -----------------------------------------------------------------------


async def test_batches_in_order_and_normalised(
    backend: FakeBackend, embedder: OpenAICompatibleEmbedder
) -> None:
    vectors = await embedder.embed(TEXTS)

    assert vectors.shape == (len(TEXTS), 64)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
    expected = np.stack([hashed_embedding(text or " ") for text in TEXTS])
    np.testing.assert_allclose(vectors, expected, atol=1e-6)
    sent = [request["input"] for request in backend.embedding_requests]
    batches = [TEXTS[0:3], [TEXTS[3], " ", TEXTS[5]], [TEXTS[6]]]  # "" is sent as " "
    assert sorted(sent) == sorted(batches)  # sent concurrently: they may arrive in any order
    assert all(r["model"] == "embed-small" for r in backend.embedding_requests)
    assert all(r["encoding_format"] == "float" for r in backend.embedding_requests)
    assert all("dimensions" not in r for r in backend.embedding_requests)


async def test_similar_texts_are_close(embedder: OpenAICompatibleEmbedder) -> None:
    cat, cat2, stock, stock2 = (await embedder.embed(TEXTS[:4]))[:4]
    assert float(cat @ cat2) > float(cat @ stock) + 0.3
    assert float(stock @ stock2) > float(stock @ cat2) + 0.3


async def test_dimensions_are_learned_from_the_first_answer(
    embedder: OpenAICompatibleEmbedder,
) -> None:
    with pytest.raises(InternalError, match=r"set embeddings\.dimensions"):
        _ = embedder.dimensions
    await embedder.embed(["hello"])
    assert embedder.dimensions == 64


async def test_configured_dimensions_are_requested(backend: FakeBackend) -> None:
    embedder = OpenAICompatibleEmbedder(remote(backend, dimensions=16))
    try:
        vectors = await embedder.embed(["one", "two"])
    finally:
        await embedder.aclose()
    assert embedder.dimensions == 16
    assert embedder.name == "openai:embed-small@16"
    assert vectors.shape == (2, 16)
    assert backend.embedding_requests[0]["dimensions"] == 16


async def test_no_texts_no_request(
    backend: FakeBackend, embedder: OpenAICompatibleEmbedder
) -> None:
    assert (await embedder.embed([])).shape[0] == 0
    assert backend.embedding_requests == []


def test_base64_answers_are_decoded() -> None:
    texts = ["alpha beta", "gamma"]
    answer = embeddings_answer({"model": "m", "input": texts, "encoding_format": "base64"})
    floats = embeddings_answer({"model": "m", "input": texts})
    np.testing.assert_array_equal(_vectors(answer, 2), _vectors(floats, 2))


def test_answers_are_put_in_index_order() -> None:
    answer = embeddings_answer({"model": "m", "input": ["alpha", "beta"]})
    data = answer["data"]
    assert isinstance(data, list)
    swapped = {"data": [data[1], data[0]]}
    np.testing.assert_array_equal(_vectors(swapped, 2), _vectors(answer, 2))


@pytest.mark.parametrize(
    "answer",
    [
        {"data": []},
        {"data": [{"index": 0, "embedding": [0.1, 0.2]}, {"index": 0, "embedding": [0.1, 0.2]}]},
        {"data": [{"index": 0, "embedding": "not base64!"}, {"index": 1, "embedding": [1.0]}]},
        {"data": [{"index": 0, "embedding": [1.0, 2.0]}, {"index": 1, "embedding": [1.0]}]},
        {"data": [{"index": 0, "embedding": ["x"]}, {"index": 1, "embedding": [1.0]}]},
        {"data": [{"index": 0, "embedding": [float("nan")]}, {"index": 1, "embedding": [1.0]}]},
        {"data": [{"index": 0, "embedding": [1e39]}, {"index": 1, "embedding": [1.0]}]},
        {"data": [{"index": 0, "embedding": [10**400]}, {"index": 1, "embedding": [1.0]}]},
        {"data": [{"index": 0, "embedding": "AACAfw=="}, {"index": 1, "embedding": [1.0]}]},
        ["not", "an", "object"],
    ],
)
def test_invalid_answers_are_upstream_errors(answer: object) -> None:
    with pytest.raises(UpstreamError, match="invalid answer"):
        _vectors(answer, 2)


async def test_the_fake_backend_answers_like_openai(backend: FakeBackend) -> None:
    body = {"model": "m", "input": "red green", "encoding_format": "base64", "dimensions": 8}
    async with httpx2.AsyncClient() as client:
        answer = (await client.post(f"{backend.base_url}/embeddings", json=body)).json()
        bad = await client.post(f"{backend.base_url}/embeddings", json={"model": "m"})
    assert answer["object"] == "list"
    assert answer["usage"] == {"prompt_tokens": 2, "total_tokens": 2}
    (entry,) = answer["data"]
    assert (entry["object"], entry["index"]) == ("embedding", 0)
    decoded = np.frombuffer(base64.b64decode(entry["embedding"]), dtype="<f4")
    np.testing.assert_array_equal(decoded, hashed_embedding("red green", 8))
    assert bad.status_code == 400
    assert "input" in bad.json()["error"]["message"]


@pytest.mark.parametrize(
    ("error", "kind", "status"),
    [
        (UpstreamRateLimitError("slow down", retry_after=3), UpstreamRateLimitError, 429),
        (UpstreamRequestError("no such model", status=404), UpstreamRequestError, 404),
        (UpstreamRequestError("bad key", status=401), UpstreamRequestError, 401),
        (UpstreamError("it broke"), UpstreamError, 500),
        (UpstreamError("overloaded", status=503), UpstreamError, 503),
    ],
)
async def test_upstream_failures_map_to_upstream_errors(
    backend: FakeBackend, error: UpstreamError, kind: type[UpstreamError], status: int
) -> None:
    backend.embedding_errors.append(error)
    embedder = OpenAICompatibleEmbedder(remote(backend, max_retries=0))
    try:
        with pytest.raises(kind) as caught:
            await embedder.embed(["hello"])
        assert (await embedder.embed(["hello"])).shape == (1, 64)  # the next request succeeds
    finally:
        await embedder.aclose()
    assert type(caught.value) is kind
    assert caught.value.status == status
    assert error.message in caught.value.message
    if status == 429:
        assert caught.value.retry_after == 3


async def test_unreachable_backend_is_an_upstream_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens there once the socket is closed
    settings = EmbeddingSettings(
        type="openai_compatible",
        base_url=f"http://127.0.0.1:{port}/v1",
        model="m",
        timeout=2,
        max_retries=0,
    )
    embedder = build_embedder(settings)
    try:
        with pytest.raises(UpstreamError, match="could not reach the embeddings backend"):
            await embedder.embed(["hello"])
    finally:
        await embedder.aclose()
