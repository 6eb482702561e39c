"""``max_infer_iters`` (Llama Stack's bound on a response's model calls) through the official
client: honoured per request, foreground, streamed and in the background; stored with the
response; above the server's own limit (``[engine] max_model_calls``, 4 here) a 400 that names
it; reaching it ends the response ``incomplete`` (``max_messages``, as the server's limit does).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
import pytest

from agentloom.config import Settings
from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import ScriptedModel, ScriptItem, tool_call
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import make_settings
from tests.server.test_background import settled

SERVER_LIMIT = 4


@pytest.fixture
def settings(backend: FakeBackend, database_url: str, tmp_path: Path) -> Settings:
    return make_settings(
        backend, database_url, files_directory=tmp_path / "files", max_model_calls=SERVER_LIMIT
    )


@pytest.fixture
def stubborn(scripted: ScriptedModel) -> ScriptedModel:
    """A model that keeps calling a tool it was not offered: the server asks it again each
    time, until the response's bound on model calls."""

    def respond(request: ChatRequest) -> list[ScriptItem]:
        return [tool_call("unoffered", {})]

    scripted.respond_with(respond)
    return scripted


def echoed(response: Any) -> Any:
    """The ``max_infer_iters`` a Response object echoes (the SDK keeps unknown fields)."""
    return (response.model_extra or {}).get("max_infer_iters")


def assert_stopped_by_the_bound(response: Any) -> None:
    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_messages"


@pytest.mark.both_databases
async def test_the_bound_is_honoured_and_stored_with_the_response(
    client: openai.AsyncOpenAI, backend: FakeBackend, stubborn: ScriptedModel
) -> None:
    response = await client.responses.create(
        model=backend.model, input="Hi", extra_body={"max_infer_iters": 2}
    )

    assert_stopped_by_the_bound(response)
    assert len(backend.requests) == 2
    assert echoed(response) == 2
    stored = await client.responses.retrieve(response.id)
    assert_stopped_by_the_bound(stored)
    assert echoed(stored) == 2


async def test_left_out_the_servers_limit_applies_and_nothing_is_echoed(
    client: openai.AsyncOpenAI, backend: FakeBackend, stubborn: ScriptedModel
) -> None:
    response = await client.responses.create(model=backend.model, input="Hi")

    assert_stopped_by_the_bound(response)
    assert len(backend.requests) == SERVER_LIMIT
    assert "max_infer_iters" not in (response.model_extra or {})


async def test_a_streamed_response_ends_incomplete_at_the_bound(
    client: openai.AsyncOpenAI, backend: FakeBackend, stubborn: ScriptedModel
) -> None:
    stream = await client.responses.create(
        model=backend.model, input="Hi", stream=True, extra_body={"max_infer_iters": 3}
    )
    events = [event async for event in stream]

    assert events[-1].type == "response.incomplete"
    assert_stopped_by_the_bound(events[-1].response)
    assert echoed(events[0].response) == 3  # response.created
    assert len(backend.requests) == 3


async def test_a_bound_the_model_does_not_reach_changes_nothing(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hello!")

    response = await client.responses.create(
        model=backend.model, input="Hi", extra_body={"max_infer_iters": 1}
    )

    assert (response.status, response.output_text) == ("completed", "Hello!")
    assert response.incomplete_details is None


@pytest.mark.both_databases
async def test_a_background_response_runs_with_its_bound(
    client: openai.AsyncOpenAI, backend: FakeBackend, stubborn: ScriptedModel
) -> None:
    queued = await client.responses.create(
        model=backend.model, input="Hi", background=True, extra_body={"max_infer_iters": 3}
    )
    assert (queued.status, echoed(queued)) == ("queued", 3)

    final = await settled(client, queued.id)

    assert_stopped_by_the_bound(final)
    assert echoed(final) == 3
    assert len(backend.requests) == 3


@pytest.mark.both_databases
@pytest.mark.parametrize("mode", [{}, {"stream": True}, {"background": True}])
async def test_above_the_servers_limit_is_a_400_naming_it(
    client: openai.AsyncOpenAI, backend: FakeBackend, stubborn: ScriptedModel, mode: dict[str, Any]
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model=backend.model,
            input="Hi",
            extra_body={"max_infer_iters": SERVER_LIMIT + 1},
            **mode,
        )

    error = caught.value.body
    assert isinstance(error, dict)
    assert (error["type"], error["param"]) == ("invalid_request_error", "max_infer_iters")
    assert error["code"] == "integer_above_max_value"
    assert f"less than or equal to {SERVER_LIMIT}" in error["message"]
    assert backend.requests == []
    listed = await client.get("/responses", cast_to=dict[str, Any])
    assert listed["data"] == []


@pytest.mark.parametrize("value", [0, -1, "many", 2.5])
async def test_a_bound_that_is_no_positive_integer_is_a_400(
    client: openai.AsyncOpenAI, backend: FakeBackend, value: object
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model=backend.model, input="Hi", extra_body={"max_infer_iters": value}
        )

    error = caught.value.body
    assert isinstance(error, dict)
    assert (error["param"], error["code"]) == ("max_infer_iters", "invalid_value")
    assert backend.requests == []
