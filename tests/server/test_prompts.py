"""Reusable prompts: ``/v1/prompts`` (versions, the default version, pagination, conflicts) and
``prompt`` on ``POST /v1/responses`` (rendered into ``instructions``, media given to the model,
the prompt echoed on the Response).

The SDK has no prompts resource: its generic ``post``/``get``/``delete`` reach the endpoints, so
replies are still parsed and errors still raised as the SDK's exception classes.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any, cast

import httpx2
import openai
import pytest
from openai.types.responses import ResponseInputImage, ResponsePromptParam
from starlette.applications import Starlette

from agentloom.ids import new_id
from agentloom.inference.base import ChatMessage, FilePart, ImagePart, TextPart
from agentloom.inference.scripted import ScriptedModel
from agentloom.storage.prompts_base import PromptRow
from agentloom.testing.backend import FakeBackend

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

PNG_DATA_URL = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgAAIAAAUAAeImBZsAAAAASUVORK5CYII="
)
PDF_DATA = "data:application/pdf;base64,JVBERi0xLjQK"
PROMPT_ID = re.compile(r"pmpt_[0-9a-f]{48}")


class PromptObject(openai.BaseModel):
    object: str
    id: str
    version: int
    prompt: str
    variables: list[str]
    is_default: bool
    created_at: int
    metadata: dict[str, str]


class PromptPage(openai.BaseModel):
    object: str
    data: list[PromptObject]
    first_id: str | None
    last_id: str | None
    has_more: bool


class DeletedPrompt(openai.BaseModel):
    id: str
    object: str
    deleted: bool


async def create(client: openai.AsyncOpenAI, template: str, **fields: Any) -> PromptObject:
    return await client.post("/prompts", cast_to=PromptObject, body={"prompt": template, **fields})


async def retrieve(
    client: openai.AsyncOpenAI, prompt_id: str, version: int | None = None
) -> PromptObject:
    query = {} if version is None else {"version": version}
    return await client.get(
        f"/prompts/{prompt_id}", cast_to=PromptObject, options={"params": query}
    )


async def update(
    client: openai.AsyncOpenAI, prompt_id: str, template: str, version: int, **fields: Any
) -> PromptObject:
    body = {"prompt": template, "version": version, **fields}
    return await client.post(f"/prompts/{prompt_id}", cast_to=PromptObject, body=body)


async def versions(client: openai.AsyncOpenAI, prompt_id: str) -> PromptPage:
    return await client.get(f"/prompts/{prompt_id}/versions", cast_to=PromptPage)


async def set_default(client: openai.AsyncOpenAI, prompt_id: str, version: int) -> PromptObject:
    path = f"/prompts/{prompt_id}/set-default-version"
    return await client.post(path, cast_to=PromptObject, body={"version": version})


async def list_page(client: openai.AsyncOpenAI, **query: Any) -> PromptPage:
    return await client.get("/prompts", cast_to=PromptPage, options={"params": query})


def the_error(reply: httpx2.Response, status: int) -> dict[str, Any]:
    """The ``error`` object of ``reply``, after checking the status and OpenAI's envelope."""
    assert reply.status_code == status, reply.text
    body = reply.json()
    assert list(body) == ["error"], body
    error: dict[str, Any] = body["error"]
    assert set(error) == {"message", "type", "param", "code"}, error
    assert error["message"].strip()
    assert error["type"] == "invalid_request_error"
    return error


def prompt_param(prompt_id: str, **fields: Any) -> ResponsePromptParam:
    return cast("ResponsePromptParam", {"id": prompt_id, **fields})


def sent(backend: FakeBackend) -> tuple[ChatMessage, ...]:
    return backend.chat_requests[-1].messages


# --- create and retrieve -----------------------------------------------------------------------


async def test_create_infers_variables_and_is_version_1_default(
    client: openai.AsyncOpenAI,
) -> None:
    created = await create(
        client, "Hi {{name}}, welcome to {{ city }}. Bye {{name}}.", metadata={"team": "a"}
    )

    assert PROMPT_ID.fullmatch(created.id)
    assert created.object == "prompt"
    assert created.version == 1
    assert created.is_default is True
    assert created.variables == ["name", "city"]
    assert created.metadata == {"team": "a"}
    assert created.created_at > 0
    assert await retrieve(client, created.id) == created
    assert await retrieve(client, created.id, version=1) == created


async def test_declared_variables_may_include_unused_names(client: openai.AsyncOpenAI) -> None:
    created = await create(client, "Hello {{who}}", variables=["who", "mood"])

    assert created.variables == ["who", "mood"]
    assert created.metadata == {}


async def test_text_in_braces_that_is_not_a_name_is_plain_text(
    client: openai.AsyncOpenAI,
) -> None:
    created = await create(client, "Keep {{ 1st }}, {{a-b}} and {x} as they are; use {{ok}}")

    assert created.variables == ["ok"]


# --- versions --------------------------------------------------------------------------------


async def test_update_adds_a_version_that_becomes_the_default(client: openai.AsyncOpenAI) -> None:
    first = await create(client, "v1 {{a}}", metadata={"k": "v"})

    second = await update(client, first.id, "v2 {{b}}", version=1)

    assert (second.id, second.version, second.is_default) == (first.id, 2, True)
    assert second.variables == ["b"]
    assert second.metadata == {"k": "v"}  # kept from the version it was based on
    assert await retrieve(client, first.id) == second
    assert (await retrieve(client, first.id, version=1)).prompt == "v1 {{a}}"
    listed = await versions(client, first.id)
    assert [(p.version, p.is_default) for p in listed.data] == [(1, False), (2, True)]
    assert (listed.first_id, listed.last_id, listed.has_more) == (first.id, first.id, False)


async def test_update_without_becoming_the_default(client: openai.AsyncOpenAI) -> None:
    first = await create(client, "v1")

    second = await update(
        client, first.id, "v2", version=1, set_as_default=False, metadata={"new": "1"}
    )

    assert (second.version, second.is_default, second.metadata) == (2, False, {"new": "1"})
    assert (await retrieve(client, first.id)).version == 1
    third = await update(client, first.id, "v3", version=2)
    assert (await retrieve(client, first.id)).version == third.version == 3


async def test_set_default_version_leaves_exactly_one_default(
    client: openai.AsyncOpenAI,
) -> None:
    first = await create(client, "v1")
    await update(client, first.id, "v2", version=1)
    await update(client, first.id, "v3", version=2)

    chosen = await set_default(client, first.id, 1)

    assert (chosen.version, chosen.is_default, chosen.prompt) == (1, True, "v1")
    assert (await retrieve(client, first.id)).version == 1
    listed = await versions(client, first.id)
    assert [p.is_default for p in listed.data] == [True, False, False]
    again = await set_default(client, first.id, 1)
    assert again == chosen


async def test_updating_a_stale_version_is_a_conflict(client: openai.AsyncOpenAI) -> None:
    first = await create(client, "v1")
    await update(client, first.id, "v2", version=1)

    with pytest.raises(openai.ConflictError) as stale:
        await update(client, first.id, "v2 again", version=1)
    with pytest.raises(openai.ConflictError) as ahead:
        await update(client, first.id, "v9", version=9)

    for raised in (stale.value, ahead.value):
        assert raised.status_code == 409
        assert raised.code == "prompt_version_conflict"
        assert raised.param == "version"
    assert [p.version for p in (await versions(client, first.id)).data] == [1, 2]


async def test_concurrent_updates_one_wins_the_other_conflicts(
    client: openai.AsyncOpenAI,
) -> None:
    prompt = await create(client, "v1")

    for latest in range(1, 6):
        results = await asyncio.gather(
            update(client, prompt.id, "left", version=latest),
            update(client, prompt.id, "right", version=latest),
            return_exceptions=True,
        )

        won = [r for r in results if isinstance(r, PromptObject)]
        lost = [r for r in results if isinstance(r, openai.ConflictError)]
        assert len(won) == 1, results
        assert len(lost) == 1, results
        assert won[0].version == latest + 1
        assert lost[0].code == "prompt_version_conflict"
    listed = await versions(client, prompt.id)
    assert [p.version for p in listed.data] == [1, 2, 3, 4, 5, 6]
    assert [p.version for p in listed.data if p.is_default] == [6]


async def test_concurrent_default_changes_keep_exactly_one_default(
    client: openai.AsyncOpenAI,
) -> None:
    prompt = await create(client, "v1")

    for latest in range(1, 6):
        await asyncio.gather(
            update(client, prompt.id, f"v{latest + 1}", version=latest),
            set_default(client, prompt.id, 1),
        )

    listed = await versions(client, prompt.id)
    assert len(listed.data) == 6
    assert len([p for p in listed.data if p.is_default]) == 1


# --- delete ----------------------------------------------------------------------------------


async def test_delete_removes_every_version(
    client: openai.AsyncOpenAI, http: httpx2.AsyncClient
) -> None:
    prompt = await create(client, "v1")
    await update(client, prompt.id, "v2", version=1)
    kept = await create(client, "another")

    deleted = await client.delete(f"/prompts/{prompt.id}", cast_to=DeletedPrompt)

    assert (deleted.id, deleted.object, deleted.deleted) == (prompt.id, "prompt.deleted", True)
    for reply in (
        await http.get(f"/prompts/{prompt.id}"),
        await http.get(f"/prompts/{prompt.id}", params={"version": 1}),
        await http.get(f"/prompts/{prompt.id}/versions"),
        await http.post(f"/prompts/{prompt.id}", json={"prompt": "v3", "version": 2}),
        await http.post(f"/prompts/{prompt.id}/set-default-version", json={"version": 1}),
        await http.delete(f"/prompts/{prompt.id}"),
    ):
        assert the_error(reply, 404)["param"] == "prompt_id"
    assert [p.id for p in (await list_page(client)).data] == [kept.id]


# --- the list --------------------------------------------------------------------------------


async def test_list_is_empty_without_prompts(client: openai.AsyncOpenAI) -> None:
    page = await list_page(client)

    assert page.object == "list"
    assert (page.data, page.first_id, page.last_id, page.has_more) == ([], None, None, False)


async def test_list_shows_the_default_version_of_each_prompt(
    client: openai.AsyncOpenAI,
) -> None:
    older = await create(client, "older v1")
    newer = await create(client, "newer v1")
    await update(client, older.id, "older v2", version=1)
    await update(client, newer.id, "newer v2", version=1, set_as_default=False)

    page = await list_page(client)

    assert [(p.id, p.version) for p in page.data] == [(newer.id, 1), (older.id, 2)]
    assert (page.first_id, page.last_id, page.has_more) == (newer.id, older.id, False)
    ascending = await list_page(client, order="asc")
    assert [p.id for p in ascending.data] == [older.id, newer.id]


async def test_list_of_exactly_one_page(client: openai.AsyncOpenAI) -> None:
    ids = [(await create(client, f"p{i}")).id for i in range(3)]

    page = await list_page(client, limit=3, order="asc")

    assert [p.id for p in page.data] == ids
    assert page.has_more is False
    rest = await list_page(client, limit=3, order="asc", after=ids[-1])
    assert (rest.data, rest.has_more) == ([], False)


@pytest.mark.parametrize("order", ["asc", "desc"])
async def test_pages_of_prompts_created_in_the_same_second(
    client: openai.AsyncOpenAI, app: Starlette, order: str
) -> None:
    store = app.state.runtime.database.prompts
    created = []
    for i in range(23):  # every prompt at the same instant: the order must come from the key
        row = PromptRow(new_id("pmpt"), 1, 1_700_000_000.0, True, _body(f"p{i}"))
        await store.create(row)
        created.append(row.id)
    expected = created if order == "asc" else created[::-1]

    seen: list[str] = []
    after: str | None = None
    while True:
        query: dict[str, Any] = {"limit": 5, "order": order}
        if after is not None:
            query["after"] = after
        page = await list_page(client, **query)
        seen += [p.id for p in page.data]
        assert page.last_id == page.data[-1].id
        if not page.has_more:
            break
        after = page.last_id

    assert seen == expected
    assert {p.created_at for p in (await list_page(client, limit=100)).data} == {1_700_000_000}


def _body(template: str) -> str:
    return json.dumps({"prompt": template, "variables": [], "metadata": {}})


# --- prompt on POST /v1/responses ----------------------------------------------------------------


async def test_a_response_renders_the_prompt_into_instructions(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    prompt = await create(client, "You guide visitors of {{ city }} in {{lang}}.")
    scripted.add_turn("Bonjour")

    response = await client.responses.create(
        model=backend.model,
        input="Hi",
        prompt={"id": prompt.id, "variables": {"city": "Paris", "lang": "French"}},
    )

    assert sent(backend) == (
        ChatMessage(role="system", content="You guide visitors of Paris in French."),
        ChatMessage(role="user", content="Hi"),
    )
    assert response.instructions == "You guide visitors of Paris in French."
    assert response.prompt is not None
    assert response.prompt.id == prompt.id
    assert response.prompt.version == "1"
    assert response.prompt.variables == {"city": "Paris", "lang": "French"}
    assert (await client.responses.retrieve(response.id)).prompt == response.prompt


async def test_request_instructions_follow_the_rendered_prompt(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    prompt = await create(client, "Speak like {{who}}.")
    scripted.add_turn("Arr")

    response = await client.responses.create(
        model=backend.model,
        input="Hi",
        instructions="Be brief.",
        prompt={"id": prompt.id, "variables": {"who": {"type": "input_text", "text": "a pirate"}}},
    )

    assert response.instructions == "Speak like a pirate.\n\nBe brief."
    assert sent(backend)[0] == ChatMessage(
        role="system", content="Speak like a pirate.\n\nBe brief."
    )
    assert response.prompt is not None
    variable = response.prompt.variables and response.prompt.variables["who"]
    assert getattr(variable, "text", None) == "a pirate"


async def test_the_default_version_is_used_unless_one_is_named(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    prompt = await create(client, "first")
    await update(client, prompt.id, "second", version=1)
    await update(client, prompt.id, "third", version=2, set_as_default=False)
    for answer in ("a", "b", "c"):
        scripted.add_turn(answer)

    default = await client.responses.create(
        model=backend.model, input="x", prompt={"id": prompt.id}
    )
    by_string = await client.responses.create(
        model=backend.model, input="x", prompt={"id": prompt.id, "version": "1"}
    )
    by_number = await client.responses.create(
        model=backend.model, input="x", prompt=prompt_param(prompt.id, version=3)
    )

    assert (default.instructions, default.prompt and default.prompt.version) == ("second", "2")
    assert (by_string.instructions, by_string.prompt and by_string.prompt.version) == (
        "first",
        "1",
    )
    assert (by_number.instructions, by_number.prompt and by_number.prompt.version) == (
        "third",
        "3",
    )
    assert default.prompt is not None
    assert default.prompt.variables == {}


async def test_image_and_file_variables_reach_the_model_before_the_input(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    prompt = await create(client, "Describe {{logo}} using {{guide}} for {{brand}}.")
    scripted.add_turn("A cat")
    image = {"type": "input_image", "image_url": PNG_DATA_URL, "detail": "low"}
    file = {"type": "input_file", "file_data": PDF_DATA, "filename": "guide.pdf"}

    response = await client.responses.create(
        model=backend.model,
        input="Go",
        prompt=prompt_param(prompt.id, variables={"logo": image, "guide": file, "brand": "Acme"}),
    )

    text = "Describe [image: logo] using [file: guide] for Acme."
    assert sent(backend) == (
        ChatMessage(role="system", content=text),
        ChatMessage(
            role="user",
            content=(
                TextPart("[image: logo]"),
                ImagePart(url=PNG_DATA_URL, detail="low"),
                TextPart("[file: guide]"),
                FilePart(filename="guide.pdf", data=PDF_DATA),
            ),
        ),
        ChatMessage(role="user", content="Go"),
    )
    assert response.instructions == text
    assert response.prompt is not None
    assert response.prompt.variables is not None
    assert isinstance(response.prompt.variables["logo"], ResponseInputImage)
    assert response.prompt.variables["brand"] == "Acme"
    # the prompt's media belong to the instructions, not to the response's input
    items = await client.responses.input_items.list(response.id, order="asc")
    assert [item.type for item in items.data] == ["message"]


async def test_input_errors_name_the_callers_own_positions(
    client: openai.AsyncOpenAI, http: httpx2.AsyncClient, backend: FakeBackend
) -> None:
    prompt = await create(client, "Look at {{pic}}.")
    orphan = {"type": "function_call_output", "call_id": "call_nowhere", "output": "x"}

    reply = await http.post(
        "/responses",
        json={
            "model": backend.model,
            "input": [{"role": "user", "content": "hi"}, orphan],
            "prompt": {
                "id": prompt.id,
                "variables": {"pic": {"type": "input_image", "image_url": PNG_DATA_URL}},
            },
        },
    )

    assert reply.status_code == 400
    assert reply.json()["error"]["param"] == "input[1]"


async def test_media_variables_with_item_input(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    prompt = await create(client, "Look at {{pic}}.")
    scripted.add_turn("ok")

    await client.responses.create(
        model=backend.model,
        input=[{"role": "user", "content": "first"}, {"role": "user", "content": "second"}],
        prompt=prompt_param(
            prompt.id, variables={"pic": {"type": "input_image", "image_url": PNG_DATA_URL}}
        ),
    )

    roles = [(m.role, m.content if isinstance(m.content, str) else "parts") for m in sent(backend)]
    assert roles == [
        ("system", "Look at [image: pic]."),
        ("user", "parts"),
        ("user", "first"),
        ("user", "second"),
    ]


async def test_a_streamed_response_echoes_the_prompt(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    prompt = await create(client, "Hello {{x}}")
    scripted.add_turn("hey")

    stream = await client.responses.create(
        model=backend.model,
        input="Hi",
        stream=True,
        prompt={"id": prompt.id, "version": "1", "variables": {"x": "there"}},
    )
    events = [event async for event in stream]

    first, last = events[0], events[-1]
    assert first.type == "response.created"
    assert last.type == "response.completed"
    for event in (first, last):
        echoed = event.response.prompt  # type: ignore[union-attr]
        assert echoed is not None
        assert (echoed.id, echoed.version, echoed.variables) == (prompt.id, "1", {"x": "there"})


# --- errors ----------------------------------------------------------------------------------

# (id, body, status, param, code)
CREATE_ERRORS: list[tuple[str, dict[str, Any], int, str | None, str | None]] = [
    ("missing prompt", {}, 400, "prompt", "missing_required_parameter"),
    ("empty prompt", {"prompt": ""}, 400, "prompt", "invalid_value"),
    ("blank prompt", {"prompt": "  \n"}, 400, "prompt", "invalid_value"),
    ("prompt not a string", {"prompt": 5}, 400, "prompt", "invalid_value"),
    ("variables not a list", {"prompt": "x", "variables": "a"}, 400, "variables", "invalid_value"),
    (
        "undeclared placeholder",
        {"prompt": "{{a}} {{b}}", "variables": ["a"]},
        400,
        "variables",
        "invalid_value",
    ),
    ("not an identifier", {"prompt": "x", "variables": ["1x"]}, 400, "variables", "invalid_value"),
    ("declared twice", {"prompt": "x", "variables": ["a", "a"]}, 400, "variables", "invalid_value"),
    (
        "metadata too large",
        {"prompt": "x", "metadata": {f"k{i}": "v" for i in range(17)}},
        400,
        "metadata",
        "invalid_value",
    ),
]


@pytest.mark.parametrize(
    ("body", "status", "param", "code"),
    [case[1:] for case in CREATE_ERRORS],
    ids=[case[0] for case in CREATE_ERRORS],
)
async def test_create_errors(
    http: httpx2.AsyncClient, body: dict[str, Any], status: int, param: str, code: str | None
) -> None:
    error = the_error(await http.post("/prompts", json=body), status)

    assert (error["param"], error["code"]) == (param, code)


async def test_create_error_names_the_undeclared_variable(http: httpx2.AsyncClient) -> None:
    reply = await http.post("/prompts", json={"prompt": "{{a}} {{b}}", "variables": ["a"]})

    assert "'b'" in the_error(reply, 400)["message"]


async def test_retrieve_errors(http: httpx2.AsyncClient, client: openai.AsyncOpenAI) -> None:
    prompt = await create(client, "x")
    unknown = new_id("pmpt")
    cases = [
        (f"/prompts/{unknown}", {}, 404, "prompt_id"),
        ("/prompts/not-an-id", {}, 404, "prompt_id"),
        (f"/prompts/{unknown}", {"version": "1"}, 404, "prompt_id"),
        (f"/prompts/{prompt.id}", {"version": "2"}, 404, "version"),
        (f"/prompts/{prompt.id}", {"version": "abc"}, 400, "version"),
        (f"/prompts/{prompt.id}", {"version": "0"}, 400, "version"),
        (f"/prompts/{prompt.id}", {"version": "-1"}, 400, "version"),
        (f"/prompts/{prompt.id}", {"version": "99999999999"}, 400, "version"),
        (f"/prompts/{unknown}/versions", {}, 404, "prompt_id"),
    ]
    for path, query, status, param in cases:
        error = the_error(await http.get(path, params=query), status)
        assert error["param"] == param, (path, query)
    with pytest.raises(openai.NotFoundError):
        await retrieve(client, unknown)


async def test_update_and_set_default_errors(
    http: httpx2.AsyncClient, client: openai.AsyncOpenAI
) -> None:
    prompt = await create(client, "x")
    unknown = new_id("pmpt")
    cases: list[tuple[str, dict[str, Any], int, str | None, str | None]] = [
        (f"/prompts/{unknown}", {"prompt": "y", "version": 1}, 404, "prompt_id", None),
        (f"/prompts/{prompt.id}", {"prompt": "y"}, 400, "version", "missing_required_parameter"),
        (f"/prompts/{prompt.id}", {"version": 1}, 400, "prompt", "missing_required_parameter"),
        (f"/prompts/{prompt.id}", {"prompt": "y", "version": 0}, 400, "version", "invalid_value"),
        (
            f"/prompts/{prompt.id}",
            {"prompt": "y", "version": 2**31},
            400,
            "version",
            "invalid_value",
        ),
        (
            f"/prompts/{prompt.id}",
            {"prompt": "{{z}}", "variables": [], "version": 1},
            400,
            "variables",
            "invalid_value",
        ),
        (
            f"/prompts/{prompt.id}",
            {"prompt": "y", "version": 2},
            409,
            "version",
            "prompt_version_conflict",
        ),
        (f"/prompts/{unknown}/set-default-version", {"version": 1}, 404, "prompt_id", None),
        (f"/prompts/{prompt.id}/set-default-version", {"version": 3}, 404, "version", None),
        (
            f"/prompts/{prompt.id}/set-default-version",
            {},
            400,
            "version",
            "missing_required_parameter",
        ),
        (
            f"/prompts/{prompt.id}/set-default-version",
            {"version": "one"},
            400,
            "version",
            "invalid_value",
        ),
    ]
    for path, body, status, param, code in cases:
        error = the_error(await http.post(path, json=body), status)
        assert (error["param"], error["code"]) == (param, code), (path, body)
    assert (await retrieve(client, prompt.id)).version == 1


async def test_list_errors(http: httpx2.AsyncClient) -> None:
    cases = [
        ({"after": new_id("pmpt")}, 404, "after"),
        ({"after": "bogus"}, 404, "after"),
        ({"limit": "0"}, 400, "limit"),
        ({"limit": "101"}, 400, "limit"),
        ({"order": "sideways"}, 400, "order"),
    ]
    for query, status, param in cases:
        assert the_error(await http.get("/prompts", params=query), status)["param"] == param


async def test_wrong_methods_are_405(http: httpx2.AsyncClient) -> None:
    reply = await http.put("/prompts")

    assert reply.status_code == 405
    assert set(reply.headers["allow"].split(", ")) >= {"GET", "POST"}


async def test_response_prompt_errors(
    http: httpx2.AsyncClient, client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    prompt = await create(client, "Hi {{name}}")
    pid = prompt.id
    ok = {"name": "Ann"}
    image_by_id = {"type": "input_image", "file_id": "file_1"}
    cases: list[tuple[dict[str, Any], int, str, str | None]] = [
        ({"id": new_id("pmpt"), "variables": ok}, 404, "prompt.id", None),
        ({"id": "unknown", "variables": ok}, 404, "prompt.id", None),
        ({"id": pid, "version": "7", "variables": ok}, 400, "prompt.version", "invalid_value"),
        ({"id": pid, "version": 7, "variables": ok}, 400, "prompt.version", "invalid_value"),
        ({"id": pid, "version": "v1", "variables": ok}, 400, "prompt.version", "invalid_value"),
        ({"id": pid, "version": 0, "variables": ok}, 400, "prompt.version", "invalid_value"),
        ({"id": pid, "version": 1.5, "variables": ok}, 400, "prompt.version", "invalid_value"),
        ({"id": pid}, 400, "prompt.variables", "missing_required_parameter"),
        ({"id": pid, "variables": {}}, 400, "prompt.variables", "missing_required_parameter"),
        (
            {"id": pid, "variables": {"name": "Ann", "extra": "x"}},
            400,
            "prompt.variables",
            "invalid_value",
        ),
        ({"id": pid, "variables": {"name": image_by_id}}, 404, "prompt.variables", None),
        (
            {"id": pid, "variables": {"name": {"type": "input_file"}}},
            400,
            "prompt.variables",
            "invalid_value",
        ),
        ({"id": pid, "variables": {"name": 5}}, 400, "prompt.variables.name", "invalid_value"),
        (
            {"id": pid, "variables": {"name": {"type": "input_audio"}}},
            400,
            "prompt.variables.name",
            "invalid_value",
        ),
        ({"variables": ok}, 400, "prompt.id", "missing_required_parameter"),
    ]
    for prompt_field, status, param, code in cases:
        body = {"model": backend.model, "input": "hi", "prompt": prompt_field}
        error = the_error(await http.post("/responses", json=body), status)
        assert (error["param"], error["code"]) == (param, code), prompt_field
    assert backend.chat_requests == []
    assert (await http.get("/responses")).json()["data"] == []


async def test_response_prompt_errors_through_the_sdk(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    prompt = await create(client, "Hi {{name}}")

    with pytest.raises(openai.NotFoundError) as missing:
        await client.responses.create(
            model=backend.model, input="hi", prompt={"id": new_id("pmpt")}
        )
    with pytest.raises(openai.BadRequestError) as unknown_variable:
        await client.responses.create(
            model=backend.model,
            input="hi",
            prompt={"id": prompt.id, "variables": {"name": "a", "nick": "b"}},
        )

    assert missing.value.param == "prompt.id"
    assert unknown_variable.value.param == "prompt.variables"
    assert "'nick'" in unknown_variable.value.message
