"""OpenAI's ``moderation`` parameter on ``POST /v1/responses``: ``score`` reports, ``block`` also
refuses; the results parse into the ``openai`` package's types. OpenAI's model names mean the
server's moderation shield (here ``pii``, the first rules shield)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from openai.types.responses import Response
from openai.types.responses.response import (
    ModerationInputError,
    ModerationInputModerationResult,
    ModerationOutputModerationResult,
)

from agentloom.config import Settings
from agentloom.inference.scripted import ScriptedModel, text
from agentloom.safety.categories import OPENAI_CATEGORIES
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import make_settings
from tests.server.test_guardrails import (
    CARD,
    EMAIL,
    FILLER,
    Router,
    assert_refused,
    model_requests,
    safety_settings,
)


@pytest.fixture
def settings(backend: FakeBackend, database_url: str, tmp_path: Path) -> Settings:
    base = make_settings(backend, database_url, files_directory=tmp_path / "files")
    return base.model_copy(update={"safety": safety_settings(backend)})


def flagged(outcome: object) -> bool:
    """A result's ``flagged`` (an error is a failed test)."""
    assert isinstance(outcome, ModerationInputModerationResult | ModerationOutputModerationResult)
    return outcome.flagged


def moderation(model: str = "omni-moderation-latest", **policy: str) -> Any:
    return {"model": model, "policy": {part: {"mode": mode} for part, mode in policy.items()}}


async def test_score_mode_reports_without_blocking(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(f"Sure, I will pay with {CARD}.")

    response = await client.responses.create(
        model=backend.model,
        input=f"Mail {EMAIL} please",
        moderation=moderation(input="score", output="score"),
    )

    assert response.output_text == f"Sure, I will pay with {CARD}."
    assert response.moderation is not None
    given, said = response.moderation.input, response.moderation.output
    assert isinstance(given, ModerationInputModerationResult)
    assert isinstance(said, ModerationOutputModerationResult)
    assert (given.type, given.model, given.flagged) == ("moderation_result", "pii", True)
    assert given.categories["pii"]
    assert given.categories["pii.email"]
    assert not given.categories["violence"]
    assert set(OPENAI_CATEGORIES) <= set(given.category_scores)
    assert given.category_applied_input_types["pii"] == ["text"]
    assert said.flagged
    assert said.categories["pii.credit_card"]
    assert not said.categories.get("pii.email", False)


async def test_a_policy_left_out_scores_and_a_clean_response_is_not_flagged(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hello there.")

    response = await client.responses.create(
        model=backend.model, input="Hi", moderation={"model": "text-moderation-latest"}
    )

    assert response.output_text == "Hello there."
    assert response.moderation is not None
    assert not flagged(response.moderation.input)
    assert not flagged(response.moderation.output)


async def test_block_mode_refuses_a_flagged_input(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    response = await client.responses.create(
        model=backend.model,
        input=f"Mail {EMAIL}",
        moderation=moderation("pii", input="block", output="score"),
    )

    assert_refused(response)
    assert scripted.requests == []
    assert response.moderation is not None
    assert flagged(response.moderation.input)
    assert not flagged(response.moderation.output)


async def test_block_mode_refuses_a_flagged_streamed_output_and_stores_the_results(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(text(FILLER * 3 + f"Card: {CARD}", chunk_size=3))

    stream = await client.responses.create(
        model=backend.model,
        input="Hi",
        stream=True,
        moderation=moderation(input="score", output="block"),
    )
    events = [event async for event in stream]

    last = events[-1]
    assert last.type == "response.completed"
    assert_refused(last.response)
    assert CARD[:6] not in json.dumps([e.model_dump() for e in events])
    result = last.response.moderation
    assert result is not None
    assert not flagged(result.input)
    assert flagged(result.output)
    assert isinstance(result.output, ModerationOutputModerationResult)
    assert result.output.categories["pii.credit_card"]
    stored = await client.responses.retrieve(last.response.id)
    assert stored.moderation == result


async def test_a_moderation_shield_that_fails_reports_an_error_in_score_mode(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.respond_with(Router("Fine.", guard_fails=True))

    response = await client.responses.create(
        model=backend.model, input="Hi", moderation=moderation("guard", input="score")
    )

    assert response.output_text == "Fine."
    assert response.moderation is not None
    failed = response.moderation.input
    assert isinstance(failed, ModerationInputError)
    assert (failed.type, failed.code) == ("error", "moderation_failed")
    assert "could not run" in failed.message
    assert len(model_requests(backend)) == 1


async def test_without_moderation_the_field_is_null(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hi.")

    body = (await http.post("/responses", json={"model": backend.model, "input": "Hi"})).json()

    assert body["moderation"] is None
    Response.model_validate(body)


async def test_an_unknown_moderation_model_is_a_400(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    reply = await http.post(
        "/responses",
        json={"model": backend.model, "input": "Hi", "moderation": {"model": "nope"}},
    )

    assert reply.status_code == 400
    assert reply.json()["error"]["param"] == "moderation.model"
    assert scripted.requests == []
    assert (await http.get("/responses")).json()["data"] == []


async def test_the_results_parse_strictly_into_the_openai_types(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hello.")
    body = {
        "model": backend.model,
        "input": f"{EMAIL}",
        "moderation": moderation(input="score", output="score"),
    }

    reply = (await http.post("/responses", json=body)).json()

    parsed = Response.model_validate(reply)
    assert parsed.moderation is not None
    assert isinstance(parsed.moderation.input, ModerationInputModerationResult)
    assert ModerationInputModerationResult.model_validate(reply["moderation"]["input"], strict=True)
