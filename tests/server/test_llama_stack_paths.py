"""Llama Stack's paths of the Responses API (``/v1/agents/responses`` ...): aliases of
``/v1/responses``, so a client written against Llama Stack works unchanged. Each is called the
way such a client would (the ``openai`` client's ``post`` / ``get`` / ``delete`` with the path)
and checked against what ``/v1/responses`` answers: the same objects, errors, keys and
projects."""

from __future__ import annotations

from typing import Any

import httpx2
import openai
import pytest
from openai import AsyncStream
from openai.types.responses import Response, ResponseStreamEvent

from agentloom.inference.scripted import ScriptedModel, text
from agentloom.testing.backend import FakeBackend
from tests.plugins.tenants import Tenant

pytestmark = pytest.mark.both_databases  # stored responses, read back through both paths

PATH = "/agents/responses"


async def _create(client: openai.AsyncOpenAI, body: dict[str, Any]) -> Response:
    return await client.post(PATH, cast_to=Response, body=body)


async def _get(client: openai.AsyncOpenAI, path: str, **params: object) -> Any:
    reply = await client.get(path, cast_to=httpx2.Response, options={"params": params})
    return reply.json()


async def test_create_retrieve_list_input_items_and_delete(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Paris.")

    created = await _create(
        client,
        {
            "model": backend.model,
            "input": "What's the capital of France?",
            "instructions": "Be concise and factual.",
            "metadata": {"user_id": "alice"},
        },
    )

    assert created.status == "completed"
    assert created.output_text == "Paris."
    assert created.metadata == {"user_id": "alice"}
    at_home = await client.responses.retrieve(created.id)
    aliased = await client.get(f"{PATH}/{created.id}", cast_to=Response)
    assert aliased.model_dump() == at_home.model_dump() == created.model_dump()

    listed = await _get(client, PATH, limit=20, order="desc", model=backend.model)
    assert listed == await _get(client, "/responses", limit=20, model=backend.model)
    assert [r["id"] for r in listed["data"]] == [created.id]

    items = await _get(client, f"{PATH}/{created.id}/input_items", limit=10, order="asc")
    home_items = await client.responses.input_items.list(created.id, limit=10, order="asc")
    assert items["data"] == [i.model_dump(exclude_unset=True) for i in home_items.data]
    assert items["data"][0]["content"][0]["text"] == "What's the capital of France?"

    deleted = (await client.delete(f"{PATH}/{created.id}", cast_to=httpx2.Response)).json()
    assert deleted == {"id": created.id, "object": "response.deleted", "deleted": True}
    with pytest.raises(openai.NotFoundError):
        await client.responses.retrieve(created.id)


async def test_a_response_made_at_home_is_found_through_the_alias(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hello.")
    made = await client.responses.create(model=backend.model, input="Hi")

    found = await client.get(f"{PATH}/{made.id}", cast_to=Response)

    assert found.model_dump() == made.model_dump()


async def test_a_streamed_create(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(text("Ninety seconds.", chunk_size=4))

    stream = await client.post(
        PATH,
        cast_to=Response,
        body={"model": backend.model, "input": "?", "stream": True},
        stream=True,
        stream_cls=AsyncStream[ResponseStreamEvent],
    )
    events = [event async for event in stream]

    assert events[0].type == "response.created"
    final = events[-1]
    assert final.type == "response.completed"
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == (
        "Ninety seconds."
    )
    stored = await client.responses.retrieve(final.response.id)
    assert stored.output_text == "Ninety seconds."


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/responses/resp_missing", None),
        ("DELETE", "/responses/resp_missing", None),
        ("GET", "/responses/resp_missing/input_items", None),
        ("GET", "/responses?limit=0", None),
        ("POST", "/responses", {"input": "no model"}),
        ("POST", "/responses", {"model": "m", "input": "?", "temperature": 9}),
    ],
)
async def test_errors_are_the_same_as_at_home(
    http: httpx2.AsyncClient, method: str, path: str, body: Any
) -> None:
    at_home = await http.request(method, path, json=body)
    aliased = await http.request(method, "/agents" + path, json=body)

    assert at_home.status_code in (400, 404)
    assert aliased.status_code == at_home.status_code
    assert aliased.json() == at_home.json()


async def test_keys_and_projects_hold_as_at_home(
    raw: httpx2.AsyncClient,
    alpha: Tenant,
    beta: Tenant,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    scripted.add_turn("Mine.")
    made = await _create(alpha.client, {"model": backend.model, "input": "Hi"})

    no_key = await raw.post(PATH, json={"model": backend.model, "input": "Hi"})
    theirs = await raw.get(f"{PATH}/{made.id}", headers=beta.headers)
    beta_list = await raw.get(PATH, headers=beta.headers)
    alpha_list = await raw.get(PATH, headers=alpha.headers)

    assert no_key.status_code == 401
    assert no_key.json()["error"]["code"] == "invalid_api_key"
    assert theirs.status_code == 404
    assert beta_list.json()["data"] == []
    assert [r["id"] for r in alpha_list.json()["data"]] == [made.id]
