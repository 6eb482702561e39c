"""Encrypted reasoning for stateless clients: with ``include: ["reasoning.encrypted_content"]``
reasoning items carry the backend's reasoning sealed; replayed, it is opened and given back to
the backend. Changed or foreign content is a 400 naming the item, and never logged.

On SQLite only: sealing keys are per server, the stores have their own suites.
"""

from __future__ import annotations

import logging
from typing import Any, cast

import httpx2
import openai
import pytest
from openai.types.responses import ResponseInputItemParam, ResponseReasoningItem
from pydantic import SecretStr

from agentloom.config import Settings, load_settings
from agentloom.inference.scripted import ScriptedModel, reasoning, text, tool_call
from agentloom.sealing import Sealer, SealingKey
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend
from tests.e2e.support import received
from tests.plugins.server import BASE_URL, running
from tests.server.test_errors import the_error

THOUGHT = "The user wants the weather. I should call get_weather for Paris."
INCLUDE = ["reasoning.encrypted_content"]
TOOLS: list[Any] = [
    {
        "type": "function",
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]
QUESTION = {"role": "user", "content": "Weather in Paris?"}


def wire(items: list[dict[str, Any]]) -> list[ResponseInputItemParam]:
    return cast("list[ResponseInputItemParam]", items)


def script_call(scripted: ScriptedModel) -> None:
    """First call: reasoning, then a function call; second call: the answer."""
    scripted.add_turns(
        [reasoning(THOUGHT), tool_call("get_weather", {"city": "Paris"}, "call_1")],
        "Sunny, 21C.",
    )


def as_codex_replays(output: list[Any]) -> list[dict[str, Any]]:
    """The output items as Codex sends them back: reasoning without ``content`` or ``id``."""
    items = []
    for item in output:
        dumped = item.model_dump(exclude_none=True, warnings=False)
        if dumped["type"] == "reasoning":
            dumped.pop("content", None)
            dumped.pop("id", None)
        items.append(dumped)
    return items


def replay(output: list[Any], reasoning_item: dict[str, Any] | None = None) -> list[Any]:
    """The next turn's input: the question, the first turn's output (its reasoning item
    replaced by ``reasoning_item`` if given), the function's result."""
    items = as_codex_replays(output)
    if reasoning_item is not None:
        items = [reasoning_item if i["type"] == "reasoning" else i for i in items]
    result = {"type": "function_call_output", "call_id": "call_1", "output": "sunny, 21C"}
    return [QUESTION, *items, result]


async def first_turn(client: openai.AsyncOpenAI, model: str) -> list[Any]:
    first = await client.responses.create(
        model=model, input=wire([QUESTION]), tools=TOOLS, include=INCLUDE, store=False
    )
    return list(first.output)


def sealed_of(output: list[Any]) -> str:
    (item,) = [i for i in output if isinstance(i, ResponseReasoningItem)]
    assert isinstance(item.encrypted_content, str)
    return item.encrypted_content


# --- sealing ----------------------------------------------------------------------------------


async def test_reasoning_items_carry_sealed_reasoning_only_when_included(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns([reasoning(THOUGHT), text("Hi.")], [reasoning(THOUGHT), text("Hi.")])

    plain = await client.responses.create(model=backend.model, input="Hi")
    included = await client.responses.create(
        model=backend.model, input="Hi", include=INCLUDE, store=False
    )

    (without,) = [i for i in plain.output if isinstance(i, ResponseReasoningItem)]
    assert without.encrypted_content is None
    sealed = sealed_of(list(included.output))
    assert sealed.startswith("al1.")
    assert THOUGHT not in sealed
    assert "Paris" not in sealed


async def test_streamed_reasoning_items_are_sealed_when_done(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(reasoning(THOUGHT, chunk_size=10), text("Hi."))

    stream = await client.responses.create(
        model=backend.model, input="Hi", include=INCLUDE, store=False, stream=True
    )
    events = [event async for event in stream]

    added = [e.item for e in events if e.type == "response.output_item.added"]
    done = [e.item for e in events if e.type == "response.output_item.done"]
    assert [i.type for i in added] == ["reasoning", "message"]
    assert isinstance(added[0], ResponseReasoningItem)
    assert added[0].encrypted_content is None  # sealed once the reasoning is whole
    assert isinstance(done[0], ResponseReasoningItem)
    sealed = done[0].encrypted_content
    assert isinstance(sealed, str)
    assert sealed.startswith("al1.")
    completed = events[-1]
    assert completed.type == "response.completed"
    assert sealed_of(list(completed.response.output)) == sealed


# --- stateless replay --------------------------------------------------------------------------


async def test_a_replayed_item_gives_the_backend_its_reasoning_back(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    script_call(scripted)
    output = await first_turn(client, backend.model)

    await client.responses.create(
        model=backend.model, input=replay(output), tools=TOOLS, include=INCLUDE, store=False
    )

    assistant, tool = received(backend)[1]["messages"][-2:]
    assert assistant["role"] == "assistant"
    assert assistant["reasoning_content"] == THOUGHT
    assert assistant["tool_calls"][0]["id"] == "call_1"
    assert tool["role"] == "tool"


async def test_the_sealed_reasoning_takes_precedence_over_the_items_text(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    script_call(scripted)
    output = await first_turn(client, backend.model)
    forged = {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "a summary"}],
        "content": [{"type": "reasoning_text", "text": "forged thoughts"}],
        "encrypted_content": sealed_of(output),
    }

    await client.responses.create(
        model=backend.model, input=replay(output, forged), tools=TOOLS, store=False
    )

    assert received(backend)[1]["messages"][-2]["reasoning_content"] == THOUGHT


async def test_without_sealed_content_the_items_own_text_is_given_back(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    """As before: an item without ``encrypted_content`` gives its content (or summary)."""
    script_call(scripted)
    output = await first_turn(client, backend.model)
    plain = {"type": "reasoning", "summary": [{"type": "summary_text", "text": "in short"}]}

    await client.responses.create(
        model=backend.model, input=replay(output, plain), tools=TOOLS, store=False
    )

    assert received(backend)[1]["messages"][-2]["reasoning_content"] == "in short"


# --- refused content ---------------------------------------------------------------------------


def _tampered(sealed: str) -> str:
    last = sealed[-5]
    return sealed[:-5] + ("A" if last != "A" else "B") + sealed[-4:]


def _foreign(sealed: str) -> str:
    return Sealer([SealingKey.new()]).seal("reasoning", b'{"v": 1, "model": "m", "text": "x"}')


CHANGES = {
    "tampered": _tampered,
    "truncated": lambda sealed: sealed[: len(sealed) // 2],
    "another server's key": _foreign,
    "not sealed": lambda sealed: "plain text the client made up",
    "empty": lambda sealed: "",
}


@pytest.mark.parametrize("change", list(CHANGES))
async def test_changed_or_foreign_content_is_refused_and_never_logged(
    client: openai.AsyncOpenAI,
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    scripted: ScriptedModel,
    caplog: pytest.LogCaptureFixture,
    change: str,
) -> None:
    script_call(scripted)
    output = await first_turn(client, backend.model)
    bad = CHANGES[change](sealed_of(output))
    item = {"type": "reasoning", "summary": [], "encrypted_content": bad}
    caplog.set_level(logging.DEBUG)

    reply = await http.post(
        "/responses",
        json={"model": backend.model, "input": replay(output, item), "tools": TOOLS},
    )

    error = the_error(reply, 400)
    assert error["type"] == "invalid_request_error"
    assert (error["param"], error["code"]) == (
        "input[1].encrypted_content",
        "invalid_encrypted_content",
    )
    assert "reasoning item's encrypted_content cannot be read" in error["message"]
    assert len(backend.requests) == 1  # the model was not called again
    assert caplog.records  # debug logging was on
    if bad:
        assert bad not in caplog.text
        assert bad not in error["message"]


async def test_content_sealed_for_another_use_is_refused(
    client: openai.AsyncOpenAI,
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    """A compaction item's content, sealed by this very server, is no reasoning."""
    scripted.add_turn("a summary")
    compacted = await client.responses.compact(model=backend.model, input=wire([QUESTION]))
    compaction = compacted.output[-1].model_dump()
    item = {
        "type": "reasoning",
        "summary": [],
        "encrypted_content": compaction["encrypted_content"],
    }

    reply = await http.post("/responses", json={"model": backend.model, "input": [QUESTION, item]})

    assert the_error(reply, 400)["param"] == "input[1].encrypted_content"


# --- key rotation -------------------------------------------------------------------------------


def with_keys(settings: Settings, key: SealingKey, *old: SealingKey) -> Settings:
    server = settings.server.model_copy(
        update={
            "sealing_key": SecretStr(key.text()),
            "sealing_old_keys": [SecretStr(k.text()) for k in old],
        }
    )
    return settings.model_copy(update={"server": server})


async def _create(settings: Settings, body: dict[str, Any]) -> httpx2.Response:
    async with running(create_app(settings)) as app:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url=BASE_URL) as http:
            return await http.post("/responses", json=body)


async def test_rotated_keys_still_open_what_they_sealed(
    settings: Settings, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    key_a, key_b = SealingKey.new(), SealingKey.new()
    script_call(scripted)
    first = await _create(
        with_keys(settings, key_a),
        {
            "model": backend.model,
            "input": [QUESTION],
            "tools": TOOLS,
            "include": INCLUDE,
            "store": False,
        },
    )
    output = first.json()["output"]
    for item in output:
        item.pop("content", None)
    result = {"type": "function_call_output", "call_id": "call_1", "output": "sunny, 21C"}
    body = {"model": backend.model, "input": [QUESTION, *output, result], "tools": TOOLS}
    body["store"] = False

    rotated = await _create(with_keys(settings, key_b, key_a), body)
    dropped = await _create(with_keys(settings, key_b), body)

    assert rotated.status_code == 200, rotated.text
    assert received(backend)[1]["messages"][-2]["reasoning_content"] == THOUGHT
    assert the_error(dropped, 400)["param"] == "input[1].encrypted_content"
    assert len(backend.requests) == 2  # the refused replay never reached the model


def test_old_keys_come_from_the_environment_comma_separated() -> None:
    old = [SealingKey.new(), SealingKey.new()]
    env = {
        "AGENTLOOM_SEALING_KEY": SealingKey.new().text(),
        "AGENTLOOM_SEALING_OLD_KEYS": f"{old[0].text()}, {old[1].text()}",
    }

    settings = load_settings(env=env)

    shown = [k.get_secret_value() for k in settings.server.sealing_old_keys]
    assert shown == [k.text() for k in old]
