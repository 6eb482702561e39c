"""``[[models]]`` of ``kind = "embeddings"`` through the official ``openai`` client: a routed
embeddings id served by two fake backends over HTTP (one failing or stalling), falling back to
another routed id on a third, then to the configured embeddings model; and the 400 for a routed
id asked for on the other API."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from agentloom.config import DeploymentSettings, ProviderSettings, RoutedModelSettings, Settings
from agentloom.errors import UpstreamError
from agentloom.inference.scripted import ScriptedModel
from agentloom.testing.backend import FakeBackend
from tests.inference.support import closed_port_url
from tests.plugins.server import BASE_URL, FAKE_EMBEDDING_MODEL, audited_client, make_settings
from tests.replicas import fake_backends

COOLDOWN = 0.5
TIMEOUT = 1.0
TEXTS = ["The cat sat on the mat.", "A dog barked."]


@pytest.fixture(scope="module")
def _served() -> Iterator[list[FakeBackend]]:
    with fake_backends(3) as backends:
        yield backends


@pytest.fixture
def replicas(_served: list[FakeBackend]) -> list[FakeBackend]:
    """Backends of providers ``a`` and ``b`` (the deployments of ``vectors``) and ``c`` (of
    ``spare``, its first fallback), nothing received yet."""
    for backend in _served:
        backend.reset(ScriptedModel())
    return _served


@pytest.fixture
def settings(backend: FakeBackend, replicas: list[FakeBackend], tmp_path: Path) -> Settings:
    base = make_settings(backend, f"sqlite:///{tmp_path / 'agentloom.db'}", timeout=TIMEOUT)
    providers = [
        ProviderSettings(name=name, base_url=r.base_url, discover=False, timeout=TIMEOUT)
        for name, r in zip("abc", replicas, strict=True)
    ]
    vectors = _route("vectors", ["spare", FAKE_EMBEDDING_MODEL], a="embed-a", b="embed-b")
    chat = RoutedModelSettings(
        id="chat", deployments=[DeploymentSettings(provider="fake", model=backend.model)]
    )
    models = [vectors, _route("spare", [], c="embed-c"), chat]
    return Settings.model_validate(
        {**base.model_dump(), "providers": [*base.providers, *providers], "models": models}
    )


def _route(model_id: str, fallbacks: list[str], **deployments: str) -> RoutedModelSettings:
    return RoutedModelSettings(
        id=model_id,
        kind="embeddings",
        fallbacks=fallbacks,
        deployments=[DeploymentSettings(provider=p, model=m) for p, m in deployments.items()],
        cooldown=COOLDOWN,
    )


def _down(backend: FakeBackend, status: int = 500) -> None:
    backend.embedding_errors = [UpstreamError("the replica is down", status=status)] * 20


def _models(*backends: FakeBackend) -> list[str]:
    return [str(request["model"]) for b in backends for request in b.embedding_requests]


async def _embed(client: openai.AsyncOpenAI, model: str = "vectors") -> list[list[float]]:
    answer = await client.embeddings.create(model=model, input=TEXTS, encoding_format="float")
    assert answer.model == model  # the id the client used, not a deployment's
    assert answer.usage.prompt_tokens > 0
    return [item.embedding for item in answer.data]


# --- /v1/models ------------------------------------------------------------------------------


async def test_a_routed_embeddings_model_is_listed_once_as_the_routers(
    client: openai.AsyncOpenAI,
) -> None:
    listed = [model async for model in client.models.list()]

    assert [m.id for m in listed].count("vectors") == 1
    assert next(m.owned_by for m in listed if m.id == "vectors") == "router"
    assert (await client.models.retrieve("vectors")).owned_by == "router"
    assert next(m.model_extra for m in listed if m.id == "vectors") == {"kind": "embeddings"}


# --- routing ---------------------------------------------------------------------------------


async def test_idle_deployments_take_turns(
    client: openai.AsyncOpenAI, replicas: list[FakeBackend]
) -> None:
    a, b, c = replicas

    first = [await _embed(client) for _ in range(4)]

    assert sorted(_models(a, b)) == ["embed-a", "embed-a", "embed-b", "embed-b"]
    assert all(vectors == first[0] for vectors in first)  # the same fake vectors everywhere
    assert c.embedding_requests == []


@pytest.mark.parametrize("status", [500, 503, 429])
async def test_embeddings_go_around_a_failing_deployment_until_it_is_back(
    client: openai.AsyncOpenAI, replicas: list[FakeBackend], status: int
) -> None:
    a, b, _ = replicas
    _down(a, status)

    for _ in range(3):
        assert len(await _embed(client)) == len(TEXTS)
    assert (len(a.embedding_requests), len(b.embedding_requests)) == (1, 3)  # a cools down

    a.embedding_errors = []
    await asyncio.sleep(COOLDOWN)
    await _embed(client)
    await _embed(client)

    assert len(a.embedding_requests) == 2  # back in the rotation
    assert len(b.embedding_requests) == 4


async def test_a_stalled_deployment_times_out_and_the_next_answers(
    client: openai.AsyncOpenAI, replicas: list[FakeBackend]
) -> None:
    a, b, _ = replicas
    a.embedding_delays = [TIMEOUT * 3]

    await _embed(client)

    assert _models(a, b) == ["embed-a", "embed-b"]


async def test_a_stopped_deployment_is_passed_over(
    settings: Settings, replicas: list[FakeBackend]
) -> None:
    """Provider ``b`` points at a port nobody listens on: every call is answered by ``a``."""
    a, _, c = replicas
    stopped = {"base_url": closed_port_url()}
    providers = [p.model_copy(update=stopped) if p.name == "b" else p for p in settings.providers]

    async with (
        audited_client(settings.model_copy(update={"providers": providers})) as raw,
        openai.AsyncOpenAI(base_url=BASE_URL, api_key="-", http_client=raw, max_retries=0) as sdk,
    ):
        for _ in range(3):
            await _embed(sdk)

    assert _models(a) == ["embed-a"] * 3
    assert c.embedding_requests == []


async def test_the_fallbacks_answer_in_order_when_every_deployment_failed(
    client: openai.AsyncOpenAI, backend: FakeBackend, replicas: list[FakeBackend]
) -> None:
    a, b, c = replicas
    _down(a)
    _down(b)

    await _embed(client)
    assert _models(a, b, c) == ["embed-a", "embed-b", "embed-c"]  # the routed "spare"

    _down(c)
    await _embed(client)  # a and b cool down; spare's c fails: the configured embeddings model
    assert _models(c) == ["embed-c", "embed-c"]
    assert _models(backend) == [FAKE_EMBEDDING_MODEL]


async def test_a_refused_request_is_not_tried_elsewhere(
    client: openai.AsyncOpenAI, replicas: list[FakeBackend]
) -> None:
    a, b, c = replicas
    _down(a, 400)
    _down(b, 400)

    with pytest.raises(openai.APIStatusError):
        await _embed(client)

    assert len(_models(a, b)) == 1
    assert c.embedding_requests == []


# --- the other API ---------------------------------------------------------------------------


async def test_a_routed_chat_model_is_not_an_embeddings_model(client: openai.AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.embeddings.create(model="chat", input="Hi")

    assert "'chat'" in caught.value.message
    assert caught.value.code == "model_not_supported"


async def test_a_routed_embeddings_model_does_not_chat(client: openai.AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as chat:
        await client.chat.completions.create(
            model="vectors", messages=[{"role": "user", "content": "Hi"}]
        )
    with pytest.raises(openai.BadRequestError) as responses:
        await client.responses.create(model="vectors", input="Hi")

    for caught in (chat, responses):
        assert "'vectors'" in caught.value.message
        assert caught.value.code == "model_not_supported"
