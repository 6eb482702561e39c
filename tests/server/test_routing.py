"""``[[models]]`` routing through the official ``openai`` client: a routed id served by two fake
backends over HTTP (one failing), its fallback on a third, for Responses and Chat Completions,
streamed and not."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from agentloom.config import DeploymentSettings, RoutedModelSettings, Settings
from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import ScriptedModel, TurnPart, break_stream, delay, text
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import make_settings
from tests.replicas import failing, fake_backends, routed_settings

COOLDOWN = 0.5
HELLO: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Hi"}]


@pytest.fixture(scope="module")
def _served() -> Iterator[list[FakeBackend]]:
    with fake_backends(3) as backends:
        yield backends


@pytest.fixture
def replicas(_served: list[FakeBackend]) -> list[FakeBackend]:
    """Backends of providers ``a`` and ``b`` (the deployments of ``chat``) and ``c`` (serving
    ``small``, its fallback), each echoing."""
    for backend in _served:
        backend.reset(ScriptedModel())
    return _served


@pytest.fixture
def settings(backend: FakeBackend, replicas: list[FakeBackend], tmp_path: Path) -> Settings:
    base = make_settings(backend, f"sqlite:///{tmp_path / 'agentloom.db'}", timeout=1.0)
    chat = RoutedModelSettings(
        id="chat",
        deployments=[
            DeploymentSettings(provider="a", model="model-a"),
            DeploymentSettings(provider="b", model="model-b"),
        ],
        fallbacks=["small"],
        cooldown=COOLDOWN,
    )
    return routed_settings(base, replicas, [chat], timeout=1.0)


def _models(*backends: FakeBackend) -> list[str]:
    return [str(request["model"]) for b in backends for request in b.requests]


async def _ask(client: openai.AsyncOpenAI, text: str = "Hi") -> str:
    response = await client.responses.create(model="chat", input=text)
    assert response.status == "completed"
    assert response.model == "chat"
    return response.output_text


# --- /v1/models ------------------------------------------------------------------------------


async def test_a_routed_model_is_listed_once_as_the_routers(client: openai.AsyncOpenAI) -> None:
    listed = [model async for model in client.models.list()]

    assert [m.id for m in listed].count("chat") == 1
    assert next(m.owned_by for m in listed if m.id == "chat") == "router"
    assert (await client.models.retrieve("chat")).owned_by == "router"
    assert next(m.model_extra for m in listed if m.id == "chat") == {"kind": "chat"}


# --- Responses -------------------------------------------------------------------------------


async def test_responses_go_around_a_failing_deployment_until_it_is_back(
    client: openai.AsyncOpenAI, replicas: list[FakeBackend]
) -> None:
    a, b, _ = replicas
    a.reset(failing())

    assert [await _ask(client, f"call {i}") for i in range(3)] == ["call 0", "call 1", "call 2"]
    assert (len(a.requests), len(b.requests)) == (1, 3)  # a is cooling down

    a.reset(ScriptedModel())
    await asyncio.sleep(COOLDOWN)
    await _ask(client)
    await _ask(client)

    assert len(a.requests) == 1  # back: the idle deployments take turns again
    assert len(b.requests) == 4


async def test_a_streamed_response_is_routed(
    client: openai.AsyncOpenAI, replicas: list[FakeBackend]
) -> None:
    a, b, _ = replicas
    a.reset(failing())

    stream = await client.responses.create(model="chat", input="Streamed", stream=True)
    kinds = [event.type async for event in stream]

    assert kinds[-1] == "response.completed"
    assert _models(a, b) == ["model-a", "model-b"]


async def test_the_fallback_answers_when_every_deployment_failed(
    client: openai.AsyncOpenAI, replicas: list[FakeBackend]
) -> None:
    a, b, c = replicas
    a.reset(failing())
    b.reset(failing())

    assert await _ask(client, "Rescued") == "Rescued"
    assert _models(a, b, c) == ["model-a", "model-b", "small"]


async def test_a_response_that_started_is_not_retried(
    client: openai.AsyncOpenAI, replicas: list[FakeBackend]
) -> None:
    a, b, c = replicas
    a.reset(ScriptedModel([[text("Hel"), break_stream()]]))  # the first call goes to a

    stream = await client.responses.create(model="chat", input="Hi", stream=True)
    events = [event async for event in stream]

    assert events[-1].type == "response.failed"
    assert any(e.type == "response.output_text.delta" for e in events)
    assert b.requests == []
    assert c.requests == []


# --- Chat Completions ------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_chat_completions_are_routed_and_answer_under_the_routed_id(
    client: openai.AsyncOpenAI, replicas: list[FakeBackend], stream: bool
) -> None:
    a, b, _ = replicas
    a.reset(failing())

    if stream:
        chunks = await client.chat.completions.create(model="chat", messages=HELLO, stream=True)
        parts = [chunk async for chunk in chunks]
        models = {chunk.model for chunk in parts}
        content = "".join(c.choices[0].delta.content or "" for c in parts if c.choices)
    else:
        answer = await client.chat.completions.create(model="chat", messages=HELLO)
        models = {answer.model}
        content = answer.choices[0].message.content or ""

    assert models == {"chat"}  # not the deployment's own id
    assert content == "Hi"
    assert _models(a, b) == ["model-a", "model-b"]


async def test_a_chat_completion_falls_back(
    client: openai.AsyncOpenAI, replicas: list[FakeBackend]
) -> None:
    a, b, c = replicas
    a.reset(failing())
    b.reset(failing())

    answer = await client.chat.completions.create(model="chat", messages=HELLO)

    assert answer.choices[0].message.content == "Hi"
    assert _models(a, b, c) == ["model-a", "model-b", "small"]


async def test_a_chat_stream_that_started_fails_for_the_client(
    client: openai.AsyncOpenAI, replicas: list[FakeBackend]
) -> None:
    a, b, c = replicas
    a.reset(ScriptedModel([[text("Hel"), break_stream()]]))
    seen: list[str] = []

    with pytest.raises(openai.APIError):
        await _read_chat(client, seen)

    assert "".join(seen) == "Hel"
    assert b.requests == []
    assert c.requests == []


async def _read_chat(client: openai.AsyncOpenAI, seen: list[str]) -> None:
    chunks = await client.chat.completions.create(model="chat", messages=HELLO, stream=True)
    async for chunk in chunks:
        if chunk.choices:
            seen.append(chunk.choices[0].delta.content or "")


# --- load balancing --------------------------------------------------------------------------


def _slowly(request: ChatRequest) -> list[TurnPart]:
    return [delay(0.2), "ok"]


async def test_concurrent_requests_are_spread_over_healthy_deployments(
    client: openai.AsyncOpenAI, replicas: list[FakeBackend]
) -> None:
    a, b, c = replicas
    a.reset(ScriptedModel(_slowly))
    b.reset(ScriptedModel(_slowly))

    answers = await asyncio.gather(
        *(client.chat.completions.create(model="chat", messages=HELLO) for _ in range(3)),
        *(client.responses.create(model="chat", input="Hi") for _ in range(3)),
    )

    assert len(answers) == 6
    assert (len(a.requests), len(b.requests)) == (3, 3)
    assert c.requests == []
