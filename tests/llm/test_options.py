"""Per-call metadata and extra_body merged with the LLM's own; reasoning models' sampling;
reasoning.summary."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentloom.errors import InvalidRequestError
from agentloom.inference.scripted import ScriptedModel
from agentloom.llm import LLM, CallOptions, Message, is_reasoning_model
from agentloom.testing.backend import FakeBackend
from tests.llm.conftest import MakeLLM

HI = [Message.user("Hi")]


@pytest.fixture
async def chat_llm(backend: FakeBackend) -> AsyncIterator[LLM]:
    async with LLM(
        backend.model,
        base_url=backend.base_url,
        max_retries=0,
        metadata={"app": "loom", "env": "test"},
        extra_body={"service_tier": "flex", "metadata": {"team": "sdk"}},
    ) as llm:
        yield llm


async def test_metadata_is_merged_on_chat_completions(
    chat_llm: LLM, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hello.")

    await chat_llm.acompletion(
        HI, metadata={"env": "ci", "run": "42"}, extra_body={"seed": 7, "metadata": {"x": "1"}}
    )

    body = backend.last_request
    assert body["metadata"] == {"team": "sdk", "x": "1", "app": "loom", "env": "ci", "run": "42"}
    assert (body["service_tier"], body["seed"]) == ("flex", 7)


async def test_metadata_is_merged_on_responses(
    server_llm: MakeLLM, scripted: ScriptedModel, wire: list[dict[str, Any]]
) -> None:
    scripted.add_turn("Hello.")
    llm = server_llm(metadata={"app": "loom"}, extra_body={"metadata": {"team": "sdk"}})

    reply = await llm.aresponses(HI, metadata={"run": "42"}, extra_body={"user": "u-1"})

    assert wire[0]["metadata"] == {"team": "sdk", "app": "loom", "run": "42"}
    assert wire[0]["user"] == "u-1"
    assert reply.raw_response is not None
    assert reply.raw_response.metadata == {"team": "sdk", "app": "loom", "run": "42"}


@pytest.mark.parametrize(
    ("metadata", "says"),
    [
        ({f"k{i}": "v" for i in range(17)}, "at most 16 pairs, got 17"),
        ({"k" * 65: "v"}, "65 characters, at most 64"),
        ({"k": "v" * 513}, "513 characters, at most 512"),
        ({"k": 1}, "must be strings"),
    ],
)
async def test_bad_metadata_is_refused_before_anything_is_sent(
    chat_llm: LLM, backend: FakeBackend, metadata: dict[str, Any], says: str
) -> None:
    with pytest.raises(InvalidRequestError, match=says) as caught:
        await chat_llm.acompletion(HI, metadata=metadata)

    assert caught.value.param is not None
    assert caught.value.param.startswith("metadata")
    assert backend.requests == []


async def test_sixteen_pairs_in_all_counting_the_llms_own(chat_llm: LLM) -> None:
    extra = {f"k{i}": "v" for i in range(14)}  # + app, env, team = 17

    with pytest.raises(InvalidRequestError, match="at most 16 pairs, got 17"):
        await chat_llm.acompletion(HI, metadata=extra)


async def test_extra_body_cannot_replace_what_the_adapter_sends(chat_llm: LLM) -> None:
    with pytest.raises(InvalidRequestError, match="extra_body cannot set 'model', 'stream'"):
        await chat_llm.acompletion(HI, extra_body={"stream": False, "model": "other"})


@pytest.mark.parametrize(
    "model", ["gpt-5", "gpt-5-mini", "o1-preview", "o3", "o4-mini", "openai/gpt-5.1"]
)
def test_reasoning_models_by_name(model: str) -> None:
    assert is_reasoning_model(model)


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4.1", "llama-3.1-8b", "ollama/o-model"])
def test_other_models_are_not_reasoning_models(model: str) -> None:
    assert not is_reasoning_model(model)


async def test_a_reasoning_model_drops_temperature_and_top_p(
    server_llm: MakeLLM,
    scripted: ScriptedModel,
    wire: list[dict[str, Any]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="agentloom.llm.client")
    scripted.add_turns("One.", "Two.")
    options = CallOptions(temperature=0.2, top_p=0.9, max_output_tokens=50)
    marked = server_llm(reasoning_model=True)  # the scripted model's name is no reasoning model
    plain = server_llm()

    await marked.aresponses(HI, options=options)
    await plain.aresponses(HI, options=options)

    assert "temperature" not in wire[0]
    assert "top_p" not in wire[0]
    assert wire[0]["max_output_tokens"] == 50
    assert (wire[1]["temperature"], wire[1]["top_p"]) == (0.2, 0.9)
    assert "temperature/top_p dropped" in caplog.text


async def test_a_reasoning_model_by_name_on_chat_completions(
    backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hi.")
    options = CallOptions(temperature=0.2, top_p=0.9, reasoning_effort="low")

    async with LLM("o4-mini", base_url=backend.base_url, path="completions") as llm:
        await llm.acompletion(HI, options=options)

    body = backend.last_request
    assert "temperature" not in body
    assert "top_p" not in body
    assert body["reasoning_effort"] == "low"


async def test_reasoning_summary_on_responses(
    server_llm: MakeLLM, scripted: ScriptedModel, wire: list[dict[str, Any]]
) -> None:
    scripted.add_turn("Hi.")
    options = CallOptions(reasoning_effort="high", reasoning_summary="detailed")

    await server_llm().aresponses(HI, options=options)

    assert wire[0]["reasoning"] == {"effort": "high", "summary": "detailed"}


async def test_reasoning_summary_is_dropped_on_chat_completions(
    chat_llm: LLM, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hi.")

    await chat_llm.acompletion(HI, options=CallOptions(reasoning_summary="auto"))

    assert not any("summary" in key for key in backend.last_request)
