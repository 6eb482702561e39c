"""``input_image.image_url`` given as an object, ``{"url": ..., "detail"?: ...}`` (Chat
Completions' shape, which Llama Stack's examples send), beside OpenAI's string: read as the
string, stored and echoed as OpenAI's shape, its ``detail`` the part's; any other field of the
object refused by name. In a response's input (foreground and streamed) and in conversation
items."""

from __future__ import annotations

from typing import Any, cast

import openai
import pytest
from openai.types.responses import ResponseInputItemParam

from agentloom.inference.scripted import ScriptedModel
from agentloom.testing.backend import FakeBackend
from tests.server.test_create import IMAGE_URL, PNG_DATA_URL, messages

pytestmark = pytest.mark.both_databases  # the items are stored and read back

PARTS: list[dict[str, Any]] = [
    {"type": "input_text", "text": "What is in these?"},
    {"type": "input_image", "image_url": {"url": IMAGE_URL}, "detail": "high"},
    {"type": "input_image", "image_url": {"url": PNG_DATA_URL, "detail": "low"}},
    {"type": "input_image", "image_url": IMAGE_URL},
]
ECHOED = [
    ("input_text", None, None),
    ("input_image", IMAGE_URL, "high"),
    ("input_image", PNG_DATA_URL, "low"),
    ("input_image", IMAGE_URL, "auto"),
]
SENT = [
    {"type": "text", "text": "What is in these?"},
    {"type": "image_url", "image_url": {"url": IMAGE_URL, "detail": "high"}},
    {"type": "image_url", "image_url": {"url": PNG_DATA_URL, "detail": "low"}},
    {"type": "image_url", "image_url": {"url": IMAGE_URL, "detail": "auto"}},
]


def user_turn(*parts: dict[str, Any]) -> list[ResponseInputItemParam]:
    return cast("list[ResponseInputItemParam]", [{"role": "user", "content": list(parts)}])


def shown(content: list[Any]) -> list[tuple[str, Any, Any]]:
    return [(p.type, getattr(p, "image_url", None), getattr(p, "detail", None)) for p in content]


@pytest.mark.parametrize("streamed", [False, True])
async def test_url_objects_in_the_input_are_read_stored_and_echoed_as_strings(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel, streamed: bool
) -> None:
    scripted.add_turn("Two cats.")

    if streamed:
        stream = await client.responses.create(
            model=backend.model, input=user_turn(*PARTS), stream=True
        )
        events = [event async for event in stream]
        assert events[-1].type == "response.completed"
        response_id = events[-1].response.id
    else:
        response_id = (
            await client.responses.create(model=backend.model, input=user_turn(*PARTS))
        ).id

    assert messages(backend) == [{"role": "user", "content": SENT}]
    (item,) = (await client.responses.input_items.list(response_id)).data
    assert item.type == "message"
    assert shown(item.content) == ECHOED


async def test_url_objects_in_conversation_items_are_stored_as_strings(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Cats.")
    turn = cast("Any", user_turn(*PARTS))
    conversation = await client.conversations.create(items=turn)
    await client.conversations.items.create(conversation.id, items=turn)

    listed = await client.conversations.items.list(conversation.id, order="asc")
    await client.responses.create(model=backend.model, input="And?", conversation=conversation.id)

    assert [shown(item.content) for item in listed.data] == [ECHOED, ECHOED]  # type: ignore[union-attr]
    assert messages(backend)[:2] == [{"role": "user", "content": SENT}] * 2


@pytest.mark.parametrize(
    ("part", "named"),
    [
        ({"image_url": {"url": IMAGE_URL, "format": "png"}}, "'format'"),
        ({"image_url": {"url": IMAGE_URL, "detail": "low"}, "detail": "high"}, "'detail'"),
        ({"image_url": {"url": IMAGE_URL, "detail": "ultra"}}, "'detail'"),
        ({"image_url": {"href": IMAGE_URL}}, "'href'"),
        ({"image_url": {"url": 5}}, "'url'"),
    ],
)
async def test_a_url_object_with_another_field_or_a_bad_one_is_a_400_naming_it(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    part: dict[str, Any],
    named: str,
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model=backend.model, input=user_turn({"type": "input_image", **part})
        )

    error = caught.value.body
    assert isinstance(error, dict)
    assert (error["type"], error["code"]) == ("invalid_request_error", "invalid_value")
    assert error["param"] == "input[0].content[0].image_url"
    assert named in error["message"]
    assert scripted.requests == []
