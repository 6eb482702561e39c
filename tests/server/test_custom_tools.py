"""``custom`` (freeform) tools: offered to chat backends as a function of one string, called
back as ``custom_tool_call`` items whose ``input`` is raw text, streamed with
``response.custom_tool_call_input.delta`` / ``.done``; their outputs and replays shown to the
backend as the tool call and its result."""

from __future__ import annotations

import json
from typing import Any, cast

import openai
import pytest
from openai.types.responses import (
    CustomToolParam,
    Response,
    ResponseCustomToolCall,
    ResponseCustomToolCallInputDeltaEvent,
    ResponseInputItemParam,
    ResponseStreamEvent,
    ToolParam,
)

from agentloom.engine.freeform import FreeformInput
from agentloom.inference.scripted import ScriptedModel, tool_call
from agentloom.testing.backend import FakeBackend

GRAMMAR = 'start: "*** Begin Patch" LF hunk+ "*** End Patch" LF?\n%import common.LF\n'
APPLY_PATCH: CustomToolParam = {
    "type": "custom",
    "name": "apply_patch",
    "description": "Edit files. This is a FREEFORM tool, do not wrap the patch in JSON.",
    "format": {"type": "grammar", "syntax": "lark", "definition": GRAMMAR},
}
NOTE: CustomToolParam = {"type": "custom", "name": "note", "format": {"type": "text"}}
PATCH = '*** Begin Patch\n*** Add File: a.txt\n+say "hi" \\ tab\there é 😀\n*** End Patch\n'


def sent(backend: FakeBackend, index: int = -1) -> dict[str, Any]:
    return cast("dict[str, Any]", backend.requests[index])


def custom_calls(response: Response) -> list[ResponseCustomToolCall]:
    return [item for item in response.output if item.type == "custom_tool_call"]


def patch_call(call_id: str = "call_p", **options: Any) -> Any:
    return tool_call("apply_patch", {"input": PATCH}, call_id=call_id, **options)


async def test_custom_tool_is_a_one_string_function_and_its_call_a_custom_tool_call(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(patch_call())

    response = await client.responses.create(
        model=backend.model, input="Add a.txt", tools=[APPLY_PATCH, NOTE]
    )

    (call,) = custom_calls(response)
    assert (call.name, call.call_id, call.input) == ("apply_patch", "call_p", PATCH)
    assert call.id is not None
    assert call.id.startswith("ctc_")
    assert call.namespace is None
    patch, note = (tool["function"] for tool in sent(backend)["tools"])
    assert patch["name"] == "apply_patch"
    assert patch["description"] == APPLY_PATCH["description"]
    assert patch["parameters"]["required"] == ["input"]
    described = patch["parameters"]["properties"]["input"]
    assert described["type"] == "string"
    assert "lark grammar" in described["description"]
    assert GRAMMAR in described["description"]
    assert "Raw text." in note["parameters"]["properties"]["input"]["description"]
    echoed = [t.model_dump(exclude_none=True) for t in response.tools]
    assert echoed == [APPLY_PATCH, NOTE]
    stored = await client.responses.retrieve(response.id)
    assert custom_calls(stored) == [call]
    assert stored.tools == response.tools


async def test_a_bare_non_json_argument_is_the_input(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("apply_patch", PATCH, chunk_size=7))

    response = await client.responses.create(
        model=backend.model, input="Add a.txt", tools=[APPLY_PATCH]
    )

    assert [c.input for c in custom_calls(response)] == [PATCH]


async def test_streamed_input_arrives_as_decoded_text(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(patch_call(chunk_size=1))  # escapes and surrogate pairs cut anywhere

    stream = await client.responses.create(
        model=backend.model, input="Add a.txt", tools=[APPLY_PATCH], stream=True
    )
    events: list[ResponseStreamEvent] = [event async for event in stream]

    kinds = [e.type for e in events]
    assert kinds[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert kinds[-3:] == [
        "response.custom_tool_call_input.done",
        "response.output_item.done",
        "response.completed",
    ]
    deltas = [e for e in events if isinstance(e, ResponseCustomToolCallInputDeltaEvent)]
    assert len(deltas) == len(kinds) - 6  # nothing else between added and done
    assert "".join(d.delta for d in deltas) == PATCH
    added, done_input, done = events[2], events[-3], events[-2]
    assert added.type == "response.output_item.added"
    assert added.item.type == "custom_tool_call"
    assert added.item.input == ""
    assert done_input.type == "response.custom_tool_call_input.done"
    assert done_input.input == PATCH
    assert done.type == "response.output_item.done"
    assert done.item.type == "custom_tool_call"
    assert {e.item_id for e in [*deltas, done_input]} == {added.item.id} == {done.item.id}
    assert done.item.input == PATCH


@pytest.mark.parametrize(
    "output",
    ["patched", [{"type": "input_text", "text": "patched"}]],
    ids=["string", "content-list"],
)
async def test_stateless_replay_renders_the_call_and_its_output(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    output: str | list[dict[str, str]],
) -> None:
    """Codex's way: ``store: false`` and the whole history again with each request."""
    scripted.add_turns([patch_call("call_x")], "Patched.")
    question: ResponseInputItemParam = {"role": "user", "content": "Add a.txt"}
    first = await client.responses.create(
        model=backend.model, input=[question], tools=[APPLY_PATCH], store=False
    )
    (call,) = custom_calls(first)
    replayed = cast("ResponseInputItemParam", call.model_dump(exclude_none=True))
    result = cast(
        "ResponseInputItemParam",
        {"type": "custom_tool_call_output", "call_id": "call_x", "output": output},
    )

    second = await client.responses.create(
        model=backend.model,
        input=[question, replayed, result],
        tools=[APPLY_PATCH],
        store=False,
    )

    assert second.output_text == "Patched."
    assistant, tool = sent(backend)["messages"][1:]
    assert assistant["tool_calls"] == [
        {
            "id": "call_x",
            "type": "function",
            "function": {"name": "apply_patch", "arguments": json.dumps({"input": PATCH})},
        }
    ]
    assert tool == {"role": "tool", "content": "patched", "tool_call_id": "call_x"}


async def test_output_continues_a_stored_chain_and_lists_as_input_item(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns([patch_call("call_c")], "Done.")
    first = await client.responses.create(
        model=backend.model, input="Add a.txt", tools=[APPLY_PATCH]
    )

    second = await client.responses.create(
        model=backend.model,
        previous_response_id=first.id,
        input=[{"type": "custom_tool_call_output", "call_id": "call_c", "output": "ok"}],
        tools=[APPLY_PATCH],
    )

    assert second.output_text == "Done."
    assert sent(backend)["messages"][-1] == {
        "role": "tool",
        "content": "ok",
        "tool_call_id": "call_c",
    }
    (listed,) = (await client.responses.input_items.list(second.id)).data
    assert listed.type == "custom_tool_call_output"
    assert (listed.call_id, listed.output, listed.status) == ("call_c", "ok", "completed")
    assert listed.id.startswith("ctco_")


async def test_conversation_items_round_trip(client: openai.AsyncOpenAI) -> None:
    call = {"type": "custom_tool_call", "call_id": "call_k", "name": "apply_patch", "input": PATCH}
    output = {"type": "custom_tool_call_output", "call_id": "call_k", "output": "ok"}
    conversation = await client.conversations.create(items=cast("Any", [call, output]))

    items = (await client.conversations.items.list(conversation.id, order="asc")).data

    assert [(i.type, i.call_id) for i in items] == [  # type: ignore[union-attr]
        ("custom_tool_call", "call_k"),
        ("custom_tool_call_output", "call_k"),
    ]
    assert items[0].input == PATCH  # type: ignore[union-attr]


async def test_custom_tool_in_a_namespace_and_named_by_tool_choice(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("files__apply_patch", {"input": PATCH}))
    group = {"type": "namespace", "name": "files", "description": "", "tools": [APPLY_PATCH]}

    response = await client.responses.create(
        model=backend.model,
        input="Add a.txt",
        tools=[cast("ToolParam", group)],
        tool_choice={"type": "custom", "name": "apply_patch"},
    )

    (call,) = custom_calls(response)
    assert (call.name, call.namespace, call.input) == ("apply_patch", "files", PATCH)
    assert sent(backend)["tool_choice"] == {
        "type": "function",
        "function": {"name": "files__apply_patch"},
    }


@pytest.mark.parametrize(
    ("tool", "param"),
    [
        ({"type": "custom", "name": "a b"}, "tools[0].name"),
        ({"type": "custom"}, "tools[0].name"),
        (
            {"type": "custom", "name": "p", "format": {"type": "grammar", "syntax": "lark"}},
            "tools[0].format.definition",
        ),
        (
            {
                "type": "custom",
                "name": "p",
                "format": {"type": "grammar", "syntax": "ebnf", "definition": "x"},
            },
            "tools[0].format.syntax",
        ),
        ({"type": "custom", "name": "p", "format": {"type": "json"}}, "tools[0].format"),
    ],
    ids=["bad-name", "no-name", "no-definition", "bad-syntax", "bad-format"],
)
async def test_malformed_custom_tool_is_a_400_pointing_inside_it(
    client: openai.AsyncOpenAI, backend: FakeBackend, tool: dict[str, Any], param: str
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model=backend.model, input="Hi", tools=[cast("ToolParam", tool)]
        )

    assert caught.value.param == param
    assert backend.requests == []


async def test_output_without_its_call_is_a_400(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model=backend.model,
            input=[{"type": "custom_tool_call_output", "call_id": "nope", "output": "x"}],
        )

    assert caught.value.param == "input[0]"
    assert "custom tool call output" in caught.value.message


# --- the decoder, piece by piece ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (json.dumps({"input": PATCH}), PATCH),
        (json.dumps({"input": PATCH}, ensure_ascii=False, indent=2), PATCH),
        (json.dumps({"patch": "x\ny"}), "x\ny"),  # one string value under another key
        (json.dumps(PATCH), PATCH),  # a JSON string
        (PATCH, PATCH),  # bare text
        ("{not json", "{not json"),
        (json.dumps({"input": 3}), '{"input": 3}'),
    ],
    ids=[
        "json",
        "json-indented",
        "other-key",
        "json-string",
        "bare",
        "broken-json",
        "not-a-string",
    ],
)
def test_freeform_input_decodes_any_cut(arguments: str, expected: str) -> None:
    for size in (1, 2, 5, len(arguments)):
        decoder = FreeformInput()
        streamed = "".join(
            decoder.feed(arguments[i : i + size]) for i in range(0, len(arguments), size)
        )
        assert decoder.finish() == expected
        if arguments.lstrip().startswith("{") and expected != arguments:
            assert streamed == expected
