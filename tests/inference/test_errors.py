"""Upstream failures reach the caller as typed agentloom errors, promptly, never as SDK types."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from agentloom.errors import (
    ContextLengthExceededError,
    UpstreamError,
    UpstreamRateLimitError,
    UpstreamRequestError,
    UpstreamTimeoutError,
    UpstreamUnavailableError,
)
from agentloom.inference.base import Chunk, HTTPClientKind, ProviderConfig, TextDelta
from agentloom.inference.openai_compatible import OpenAICompatibleProvider
from agentloom.inference.scripted import (
    ScriptedModel,
    break_stream,
    delay,
    invalid_chunk,
    raise_error,
    stall,
    text,
)
from agentloom.testing.backend import FakeBackend
from tests.inference.support import HANG_GUARD, ask, closed_port_url, collect
from tests.plugins.backend import backend_config

SHORT_TIMEOUT = 0.3
LONG_SILENCE = 30.0  # far longer than SHORT_TIMEOUT: only the provider's timeout ends the wait


@pytest.fixture
async def impatient(
    backend: FakeBackend, http_client: HTTPClientKind
) -> AsyncIterator[OpenAICompatibleProvider]:
    """A provider that gives up after ``SHORT_TIMEOUT`` seconds of backend silence."""
    config = backend_config(backend, timeout=SHORT_TIMEOUT, http_client=http_client)
    client = OpenAICompatibleProvider(config)
    yield client
    await client.aclose()


# --- HTTP status errors before the stream starts ---------------------------------------------


@pytest.mark.parametrize("status", [400, 404, 422])
async def test_client_errors_become_upstream_request_errors(
    status: int, scripted: ScriptedModel, provider: OpenAICompatibleProvider
) -> None:
    error = UpstreamRequestError("bad temperature", status=status, param="temperature")
    scripted.add_turn(raise_error(error))

    with pytest.raises(UpstreamRequestError) as caught:
        await collect(provider)

    assert caught.value.status == status
    assert caught.value.param == "temperature"
    assert "bad temperature" in caught.value.message
    assert caught.value.code == "invalid_prompt"


async def test_unknown_route_is_a_404_request_error(
    backend: FakeBackend, http_client: HTTPClientKind
) -> None:
    url = backend.base_url + "/nowhere"
    config = ProviderConfig(name="fake", base_url=url, timeout=5, http_client=http_client)
    client = OpenAICompatibleProvider(config)
    try:
        with pytest.raises(UpstreamRequestError) as caught:
            await collect(client)
    finally:
        await client.aclose()

    assert caught.value.status == 404


async def test_rate_limit_carries_retry_after(
    scripted: ScriptedModel, provider: OpenAICompatibleProvider
) -> None:
    scripted.add_turn(raise_error(UpstreamRateLimitError("slow down", retry_after=2.5)))

    with pytest.raises(UpstreamRateLimitError) as caught:
        await collect(provider)

    assert caught.value.status == 429
    assert caught.value.retry_after == 2.5
    assert caught.value.code == "rate_limit_exceeded"


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_server_errors_keep_their_status(
    status: int, scripted: ScriptedModel, provider: OpenAICompatibleProvider
) -> None:
    scripted.add_turn(raise_error(UpstreamError("engine overloaded", status=status)))

    with pytest.raises(UpstreamError) as caught:
        await collect(provider)

    assert type(caught.value) is UpstreamError
    assert caught.value.status == status
    assert "engine overloaded" in caught.value.message


@pytest.mark.parametrize(
    "error",
    [
        ContextLengthExceededError("prompt too long"),
        UpstreamRequestError(
            "This model's maximum context length is 4096 tokens. However, you requested 5000."
        ),
        UpstreamRequestError("the request exceeds the available context size", status=413),
    ],
    ids=["by-code", "by-message", "413"],
)
async def test_context_length_exceeded_is_recognised(
    error: UpstreamError, scripted: ScriptedModel, provider: OpenAICompatibleProvider
) -> None:
    scripted.add_turn(raise_error(error))

    with pytest.raises(ContextLengthExceededError) as caught:
        await collect(provider)

    assert caught.value.code == "context_length_exceeded"


# --- the connection --------------------------------------------------------------------------


async def test_connection_refused_names_the_backend(http_client: HTTPClientKind) -> None:
    url = closed_port_url()
    config = ProviderConfig(name="down", base_url=url, timeout=5, http_client=http_client)
    client = OpenAICompatibleProvider(config)
    try:
        with pytest.raises(UpstreamError) as caught:
            await collect(client)
    finally:
        await client.aclose()

    assert type(caught.value) is UpstreamUnavailableError  # a 503: the backend is down
    assert "could not reach the inference backend 'down' at " + url in caught.value.message


async def test_backend_that_never_answers_times_out(
    scripted: ScriptedModel, impatient: OpenAICompatibleProvider
) -> None:
    scripted.add_turn(delay(LONG_SILENCE), "too late")

    with pytest.raises(UpstreamTimeoutError) as caught:
        await collect(impatient)

    assert "did not answer within 0.3s" in caught.value.message


# --- failures in the middle of a stream ------------------------------------------------------


async def test_stalled_stream_times_out(
    scripted: ScriptedModel, impatient: OpenAICompatibleProvider
) -> None:
    scripted.add_turn("Hel", stall(LONG_SILENCE), "lo")
    seen: list[Chunk] = []

    async def drain() -> None:
        async with asyncio.timeout(HANG_GUARD):
            async for chunk in impatient.stream(ask()):
                seen.append(chunk)

    with pytest.raises(UpstreamTimeoutError) as caught:
        await drain()

    assert seen == [TextDelta("Hel")]
    assert "stopped streaming for more than 0.3s" in caught.value.message


async def test_broken_stream_is_an_upstream_error(
    scripted: ScriptedModel, provider: OpenAICompatibleProvider
) -> None:
    scripted.add_turn(text("Hello", chunk_size=2), break_stream())

    with pytest.raises(UpstreamError) as caught:
        await collect(provider)

    assert type(caught.value) is UpstreamError
    assert "closed the stream before it finished" in caught.value.message


@pytest.mark.parametrize(
    "line",
    ["this is not json", '{"object": "chat.completion.chunk"}', '{"choices": "none"}', "[1, 2]"],
)
async def test_invalid_chunk_is_an_upstream_error(
    line: str, scripted: ScriptedModel, provider: OpenAICompatibleProvider
) -> None:
    scripted.add_turn("ok", invalid_chunk(line), "never read")

    with pytest.raises(UpstreamError) as caught:
        await collect(provider)

    assert "invalid stream chunk" in caught.value.message


async def test_error_event_mid_stream_keeps_its_status(
    scripted: ScriptedModel, provider: OpenAICompatibleProvider
) -> None:
    scripted.add_turn("partial", raise_error(UpstreamError("engine died", status=503)))

    with pytest.raises(UpstreamError) as caught:
        await collect(provider)

    assert caught.value.status == 503
    assert "engine died" in caught.value.message
