"""Backend failures end the response ``failed`` with an OpenAI error code; nothing hangs."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import openai
import pytest

from agentloom.errors import (
    ContextLengthExceededError,
    UpstreamError,
    UpstreamRateLimitError,
    UpstreamRequestError,
)
from agentloom.inference.scripted import (
    ScriptedModel,
    TurnPart,
    break_stream,
    delay,
    invalid_chunk,
    raise_error,
    text,
)
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import BASE_URL, make_settings, running

HANG_GUARD = 10.0

FAILURES: list[tuple[str, list[TurnPart], str]] = [
    ("HTTP 500", [raise_error(UpstreamError("boom", status=500))], "server_error"),
    ("HTTP 429", [raise_error(UpstreamRateLimitError("slow", status=429))], "rate_limit_exceeded"),
    ("HTTP 400", [raise_error(UpstreamRequestError("bad", status=400))], "invalid_prompt"),
    ("broken stream", [text("Hel"), break_stream()], "server_error"),
    ("invalid chunk", [text("Hel"), invalid_chunk()], "server_error"),
]
STATUS = {"server_error": 502, "rate_limit_exceeded": 429, "invalid_prompt": 400}


@pytest.mark.parametrize(("parts", "code"), [f[1:] for f in FAILURES], ids=[f[0] for f in FAILURES])
async def test_failures_are_http_errors_and_stored_failed(
    http: httpx2.AsyncClient,
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    parts: list[TurnPart],
    code: str,
) -> None:
    scripted.add_turn(*parts)

    async with asyncio.timeout(HANG_GUARD):
        reply = await http.post("/responses", json={"model": backend.model, "input": "Hi"})

    assert reply.status_code == STATUS[code]
    error = reply.json()["error"]
    assert error["code"] == code
    assert "inference backend" in error["message"]
    assert "is stored as failed" in error["message"]
    listed = (await http.get("/responses")).json()["data"]
    assert [r["status"] for r in listed] == ["failed"]
    stored = await client.responses.retrieve(listed[0]["id"])
    assert stored.error is not None
    assert stored.error.code == code


async def test_the_sdk_sees_a_rate_limit_with_its_retry_hint(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(raise_error(UpstreamRateLimitError("slow", status=429, retry_after=7)))

    with pytest.raises(openai.RateLimitError) as caught:
        await client.responses.create(model=backend.model, input="Hi")

    assert caught.value.code == "rate_limit_exceeded"
    assert caught.value.response.headers["retry-after"] == "7"


def _said(body: object) -> str:
    assert isinstance(body, dict)
    message = body["message"]
    assert isinstance(message, str)
    return message


@pytest.mark.parametrize(
    ("wait", "hint"), [(1.5, "1.5s"), (7, "7s"), (6.5571, "6.557s"), (0.05, "50ms")]
)
async def test_a_rate_limit_says_when_to_try_again_as_openai_does(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    wait: float,
    hint: str,
) -> None:
    """The backend's ``retry-after-ms`` becomes the hint clients such as Codex read."""
    scripted.add_turn(raise_error(UpstreamRateLimitError("slow", status=429, retry_after=wait)))

    with pytest.raises(openai.RateLimitError) as caught:
        await client.responses.create(model=backend.model, input="Hi")

    assert caught.value.code == "rate_limit_exceeded"
    assert _said(caught.value.body).endswith(f"Please try again in {hint}.")


async def test_a_streamed_rate_limit_fails_the_response_with_the_retry_hint(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(raise_error(UpstreamRateLimitError("slow", status=429, retry_after=1.5)))

    stream = await client.responses.create(model=backend.model, input="Hi", stream=True)
    events = [event async for event in stream]

    failed = events[-1]
    assert failed.type == "response.failed"
    assert failed.response.error is not None
    assert failed.response.error.code == "rate_limit_exceeded"
    assert failed.response.error.message.endswith("slow. Please try again in 1.5s.")


@pytest.mark.parametrize(
    ("error", "hints"),
    [
        (UpstreamRateLimitError("slow", status=429), 0),  # no wait given: no hint made up
        (UpstreamRateLimitError("slow, try again in 20ms", status=429, retry_after=0.02), 1),
    ],
    ids=["no wait", "hint already given"],
)
async def test_a_retry_hint_is_never_made_up_or_repeated(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    error: UpstreamRateLimitError,
    hints: int,
) -> None:
    scripted.add_turn(raise_error(error))

    with pytest.raises(openai.RateLimitError) as caught:
        await client.responses.create(model=backend.model, input="Hi")

    assert _said(caught.value.body).lower().count("try again in") == hints


@pytest.mark.parametrize(("parts", "code"), [f[1:] for f in FAILURES], ids=[f[0] for f in FAILURES])
async def test_failures_end_the_stream_with_response_failed(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    parts: list[TurnPart],
    code: str,
) -> None:
    scripted.add_turn(*parts)

    async with asyncio.timeout(HANG_GUARD):
        stream = await client.responses.create(model=backend.model, input="Hi", stream=True)
        events = [event async for event in stream]

    last = events[-1]
    assert last.type == "response.failed"
    assert last.response.error is not None
    assert last.response.error.code == code
    assert (await client.responses.retrieve(last.response.id)).status == "failed"


async def test_a_silent_backend_times_out(
    backend: FakeBackend, scripted: ScriptedModel, database_url: str
) -> None:
    scripted.add_turn(delay(30), "too late")
    settings = make_settings(backend, database_url, timeout=0.3)
    async with running(create_app(settings)) as app:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url=BASE_URL) as http:
            async with asyncio.timeout(HANG_GUARD):
                reply = await http.post("/responses", json={"model": backend.model, "input": "x"})

    assert reply.status_code == 504
    assert "did not answer within 0.3s" in reply.json()["error"]["message"]


# --- the context window ----------------------------------------------------------------------


def _overflow() -> TurnPart:
    return raise_error(ContextLengthExceededError("maximum context length is 8 tokens", status=400))


async def test_overflow_without_truncation_is_the_callers_400(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(_overflow())

    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model=backend.model, input="a long story")

    assert caught.value.code == "context_length_exceeded"
    assert caught.value.param == "input"


async def test_overflow_while_streaming_fails_the_response(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(_overflow())

    stream = await client.responses.create(model=backend.model, input="a long story", stream=True)
    events = [event async for event in stream]

    assert events[-1].type == "response.failed"
    assert events[-1].response.error is not None
    assert events[-1].response.error.code == "context_length_exceeded"


async def test_truncation_auto_drops_the_oldest_turn_and_retries(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns("first answer", [_overflow()], "second answer")
    first = await client.responses.create(model=backend.model, input="first question")

    second = await client.responses.create(
        model=backend.model,
        input="second question",
        previous_response_id=first.id,
        truncation="auto",
    )

    assert second.status == "completed"
    assert second.output_text == "second answer"
    assert second.truncation == "auto"
    retried: list[Any] = backend.requests[-1]["messages"]  # type: ignore[assignment]
    assert [m["content"] for m in retried] == ["second question"]


async def test_truncation_auto_that_cannot_fit_fails(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns([_overflow()])

    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model=backend.model, input="huge", truncation="auto")

    assert caught.value.code == "context_length_exceeded"
