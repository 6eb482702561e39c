"""The server's default guardrails on ``/v1/chat/completions``: the new input checked before the
backend is called, the output (whole or streamed) before it reaches the client; a block answers
as OpenAI's content filter (``refusal``, ``finish_reason: "content_filter"``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from agentloom.inference.scripted import ScriptedModel, text
from agentloom.safety.service import REFUSAL
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import BASE_URL, make_settings, running
from tests.server.test_guardrails import CARD, EMAIL, FILLER, safety_settings

HELLO = [{"role": "user", "content": "Hi"}]


@pytest.fixture
async def guarded(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> AsyncIterator[openai.AsyncOpenAI]:
    base = make_settings(backend, database_url, files_directory=tmp_path / "files")
    configured = base.model_copy(
        update={"safety": safety_settings(backend, default_guardrails=["pii"])}
    )
    async with (
        running(create_app(configured)) as app,
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=BASE_URL) as http,
        openai.AsyncOpenAI(base_url=BASE_URL, api_key="x", http_client=http) as client,
    ):
        yield client


async def test_a_blocked_input_never_reaches_the_backend(
    guarded: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    asked = [{"role": "user", "content": f"Mail {EMAIL} please"}]

    whole = await guarded.chat.completions.create(model=backend.model, messages=asked)
    stream = await guarded.chat.completions.create(
        model=backend.model,
        messages=asked,
        stream=True,
    )
    chunks = [chunk async for chunk in stream]

    assert whole.choices[0].message.refusal == REFUSAL
    assert whole.choices[0].message.content is None
    assert whole.choices[0].finish_reason == "content_filter"
    assert "".join(c.choices[0].delta.refusal or "" for c in chunks) == REFUSAL
    assert chunks[-1].choices[0].finish_reason == "content_filter"
    assert scripted.requests == []


async def test_history_is_not_checked_again(
    guarded: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    """Only what follows the last assistant message is new."""
    scripted.add_turn("Noted.")
    asked: list[Any] = [
        {"role": "user", "content": f"Mail {EMAIL}"},
        {"role": "assistant", "content": "I can't."},
        {"role": "user", "content": "Then say hi."},
    ]

    answer = await guarded.chat.completions.create(model=backend.model, messages=asked)

    assert answer.choices[0].message.content == "Noted."


async def test_a_blocked_whole_answer_becomes_a_refusal(
    guarded: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(f"Sure, the card is {CARD}.")

    answer = await guarded.chat.completions.create(model=backend.model, messages=HELLO)

    assert answer.choices[0].message.content is None
    assert answer.choices[0].message.refusal == REFUSAL
    assert answer.choices[0].finish_reason == "content_filter"


@pytest.mark.parametrize("offset", [0, 97, 130])
async def test_a_streamed_violation_never_reaches_the_client(
    guarded: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel, offset: int
) -> None:
    answer = (FILLER * 4)[:offset] + CARD + " " + FILLER * 3
    scripted.add_turn(text(answer, chunk_size=3))

    stream = await guarded.chat.completions.create(
        model=backend.model,
        messages=HELLO,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [chunk async for chunk in stream]

    shown = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert answer.startswith(shown)
    assert len(shown) <= offset
    assert CARD not in shown
    refusal = "".join(c.choices[0].delta.refusal or "" for c in chunks if c.choices)
    assert refusal == REFUSAL
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "content_filter"


async def test_a_clean_stream_comes_through_whole(
    guarded: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    answer = FILLER * 5
    scripted.add_turn(text(answer, chunk_size=7))

    stream = await guarded.chat.completions.create(
        model=backend.model,
        messages=HELLO,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [chunk async for chunk in stream]

    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == answer
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None
    assert {c.model for c in chunks} == {backend.model}


async def test_n_above_one_is_refused_while_guarded(
    guarded: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        await guarded.chat.completions.create(model=backend.model, messages=HELLO, n=2)

    assert refused.value.param == "n"


async def test_legacy_completions_are_guarded_too(
    guarded: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(f"Card: {CARD}")

    blocked_input = await guarded.completions.create(model=backend.model, prompt=f"Mail {EMAIL}")
    blocked_output = await guarded.completions.create(model=backend.model, prompt="Hi")
    with pytest.raises(openai.BadRequestError) as streamed:
        await guarded.completions.create(model=backend.model, prompt="Hi", stream=True)

    for answer in (blocked_input, blocked_output):
        assert (answer.choices[0].text, answer.choices[0].finish_reason) == ("", "content_filter")
    assert len(scripted.requests) == 1  # the blocked input never reached the backend
    assert streamed.value.param == "stream"
