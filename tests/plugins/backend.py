"""Fake inference backend fixtures: a scripted model served over a real HTTP socket.

``scripted`` is a fresh :class:`ScriptedModel` (script it with ``add_turn``/``respond_with``);
``backend`` serves it as an OpenAI-compatible backend on ``backend.base_url`` and records what it
received; ``provider`` is an :class:`OpenAICompatibleProvider` pointed at it, with timeouts short
enough that a stalled backend fails a test in about a second instead of hanging it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from agentloom.inference.base import HTTPClientKind, ProviderConfig
from agentloom.inference.openai_compatible import OpenAICompatibleProvider
from agentloom.inference.scripted import ScriptedModel
from agentloom.testing.backend import FakeBackend

HTTP_CLIENTS = ["lean", "sdk"]
PROVIDER_TIMEOUT = 1.0  # seconds of backend silence before the provider gives up


@pytest.fixture
def scripted() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture(scope="session")
def _served_backend() -> Iterator[FakeBackend]:
    """One server for the session: starting and stopping uvicorn costs ~0.2 s a test."""
    fake = FakeBackend(ScriptedModel())
    with fake.serve():
        yield fake


@pytest.fixture
def backend(_served_backend: FakeBackend, scripted: ScriptedModel) -> FakeBackend:
    """The fake backend serving ``scripted``, with nothing received yet."""
    _served_backend.reset(scripted)
    _served_backend.models = None
    return _served_backend


def backend_config(
    backend: FakeBackend,
    *,
    timeout: float = PROVIDER_TIMEOUT,
    http_client: HTTPClientKind = "lean",
) -> ProviderConfig:
    """A provider config named ``fake`` for ``backend``, giving up after ``timeout`` of silence."""
    return ProviderConfig(
        name="fake",
        base_url=backend.base_url,
        timeout=timeout,
        connect_timeout=timeout,
        http_client=http_client,
    )


@pytest.fixture(params=HTTP_CLIENTS)
def http_client(request: pytest.FixtureRequest) -> HTTPClientKind:
    """Which client sends the streamed request: the lean one, or the ``openai`` SDK."""
    value: HTTPClientKind = request.param
    return value


@pytest.fixture
async def provider(
    backend: FakeBackend, http_client: HTTPClientKind
) -> AsyncIterator[OpenAICompatibleProvider]:
    client = OpenAICompatibleProvider(backend_config(backend, http_client=http_client))
    yield client
    await client.aclose()
