"""Function tools are strict on the Responses path: schemas made strict-compatible, what cannot be
is refused by name, and the nulls strict mode adds are taken out of the arguments again."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentloom.inference.scripted import ScriptedModel, tool_call
from agentloom.json_types import JSONObject
from agentloom.llm import FunctionTool, Message, StrictSchemaError, strict_schema
from agentloom.llm.strict_schema import drop_added_nulls
from agentloom.testing.backend import FakeBackend
from tests.llm.conftest import MakeLLM

SEARCH: JSONObject = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "limit": {"type": "integer", "default": 10},
        "sort": {"type": "string", "enum": ["new", "top"]},
        "filters": {
            "type": "object",
            "properties": {"site": {"type": "string"}, "lang": {"$ref": "#/$defs/Lang"}},
            "required": ["site"],
        },
        "tags": {
            "type": "array",
            "items": {"type": "object", "properties": {"t": {"type": "string"}}},
        },
    },
    "required": ["query"],
    "$defs": {"Lang": {"type": "string", "enum": ["en", "fr"]}},
}


def test_every_object_is_closed_and_requires_all_its_properties() -> None:
    made = strict_schema(SEARCH, tool="search")

    assert made["required"] == ["query", "limit", "sort", "filters", "tags"]
    assert made["additionalProperties"] is False
    properties = made["properties"]
    assert isinstance(properties, dict)
    assert properties["query"] == {"type": "string"}  # required: unchanged
    assert properties["limit"] == {"type": ["integer", "null"], "default": 10}
    assert properties["sort"] == {"type": ["string", "null"], "enum": ["new", "top", None]}
    filters = properties["filters"]
    assert isinstance(filters, dict)
    assert filters["type"] == ["object", "null"]
    assert filters["required"] == ["site", "lang"]
    assert filters["additionalProperties"] is False
    assert filters["properties"] == {
        "site": {"type": "string"},
        "lang": {"anyOf": [{"$ref": "#/$defs/Lang"}, {"type": "null"}]},
    }
    tags = properties["tags"]
    assert isinstance(tags, dict)
    assert tags["items"] == {
        "type": "object",
        "properties": {"t": {"type": ["string", "null"]}},
        "required": ["t"],
        "additionalProperties": False,
    }
    assert made["$defs"] == {"Lang": {"type": "string", "enum": ["en", "fr"]}}
    assert "additionalProperties" not in SEARCH  # the tool's own schema is left alone


def test_a_single_all_of_is_inlined_and_an_optional_any_of_gains_null() -> None:
    schema: JSONObject = {
        "type": "object",
        "properties": {
            "point": {"allOf": [{"$ref": "#/$defs/P"}], "description": "where"},
            "id": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        },
        "required": ["point"],
        "$defs": {
            "P": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}
        },
    }

    made = strict_schema(schema, tool="t")

    properties = made["properties"]
    assert isinstance(properties, dict)
    assert properties["point"] == {"$ref": "#/$defs/P", "description": "where"}
    assert properties["id"] == {
        "anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]
    }


@pytest.mark.parametrize(
    ("schema", "says"),
    [
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "additionalProperties": True,
            },
            "parameters takes additional properties",
        ),
        (
            {
                "type": "object",
                "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}}},
            },
            "parameters.properties.m takes additional properties",
        ),
        (
            {"type": "object", "properties": {"o": {"type": "object"}}},
            "parameters.properties.o is an object without properties",
        ),
        (
            {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
            "parameters uses 'patternProperties'",
        ),
        (
            {"type": "object", "properties": {"u": {"oneOf": [{"type": "string"}]}}},
            "parameters.properties.u uses 'oneOf'",
        ),
        ({"type": "object", "properties": {"any": {}}}, "parameters.properties.any has no type"),
        ({"type": "string"}, "parameters must be an object schema"),
    ],
)
def test_what_strict_mode_cannot_express_is_refused(schema: JSONObject, says: str) -> None:
    with pytest.raises(StrictSchemaError, match=f"tool 'f' cannot be strict: {says}") as caught:
        strict_schema(schema, tool="f")

    assert "strict=False" in caught.value.message


def test_the_added_nulls_are_dropped_and_the_rest_kept() -> None:
    sent = {
        "query": "loom",
        "limit": None,
        "sort": "top",
        "filters": {"site": "x.org", "lang": None},
        "tags": [{"t": None}, {"t": "a"}],
    }

    cleaned = json.loads(drop_added_nulls(json.dumps(sent), SEARCH))

    assert cleaned == {
        "query": "loom",
        "sort": "top",
        "filters": {"site": "x.org"},
        "tags": [{}, {"t": "a"}],
    }
    untouched = '{"query": "loom"}'
    assert drop_added_nulls(untouched, SEARCH) is untouched
    assert drop_added_nulls("not json", SEARCH) == "not json"


def test_a_null_the_schema_admits_is_kept() -> None:
    schema: JSONObject = {"type": "object", "properties": {"note": {"type": ["string", "null"]}}}

    assert json.loads(drop_added_nulls('{"note": null}', schema)) == {"note": None}


LOOKUP = FunctionTool("lookup", "Look a word up.", SEARCH)


async def test_tools_are_strict_on_responses_and_the_tool_sees_its_own_shape(
    server_llm: MakeLLM, scripted: ScriptedModel, wire: list[dict[str, Any]]
) -> None:
    scripted.add_turn(tool_call("lookup", {"query": "loom", "limit": None, "sort": None}, "c1"))

    reply = await server_llm().aresponses([Message.user("Define loom.")], [LOOKUP])

    (sent,) = wire[0]["tools"]
    assert sent["strict"] is True
    assert sent["parameters"] == strict_schema(SEARCH, tool="lookup")
    (call,) = reply.tool_calls
    assert call.parsed_arguments() == {"query": "loom"}
    assert call.raw is not None
    assert json.loads(call.raw.arguments) == {"query": "loom", "limit": None, "sort": None}


async def test_strict_false_sends_the_schema_as_it_is(
    server_llm: MakeLLM, scripted: ScriptedModel, wire: list[dict[str, Any]]
) -> None:
    scripted.add_turn("No need.")
    loose = FunctionTool(
        "lookup", "", {"type": "object", "additionalProperties": True}, strict=False
    )

    await server_llm().aresponses([Message.user("Hi")], [loose])

    assert wire[0]["tools"][0]["strict"] is False
    assert wire[0]["tools"][0]["parameters"] == {"type": "object", "additionalProperties": True}


async def test_chat_completions_sends_tools_as_they_are_unless_asked(
    backend: FakeBackend, scripted: ScriptedModel
) -> None:
    from agentloom.llm import LLM

    scripted.add_turns("One.", "Two.")
    strict = FunctionTool("lookup", "", SEARCH, strict=True)
    async with LLM(backend.model, base_url=backend.base_url, max_retries=0) as llm:
        await llm.acompletion([Message.user("Hi")], [LOOKUP])
        loose_sent = backend.last_request["tools"][0]["function"]
        await llm.acompletion([Message.user("Hi")], [strict])
        strict_sent = backend.last_request["tools"][0]["function"]

    assert loose_sent["parameters"] == SEARCH
    assert "strict" not in loose_sent
    assert strict_sent["strict"] is True
    assert strict_sent["parameters"] == strict_schema(SEARCH, tool="lookup")


async def test_a_schema_that_cannot_be_strict_fails_before_anything_is_sent(
    server_llm: MakeLLM, wire: list[dict[str, Any]]
) -> None:
    open_tool = FunctionTool("f", "", {"type": "object", "additionalProperties": True}, strict=True)

    with pytest.raises(StrictSchemaError, match="tool 'f' cannot be strict"):
        await server_llm().aresponses([Message.user("Hi")], [open_tool])
    assert wire == []


async def test_a_default_tool_that_cannot_be_strict_is_sent_as_it_is_with_a_warning(
    server_llm: MakeLLM,
    scripted: ScriptedModel,
    wire: list[dict[str, Any]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A tool that never asked to be strict (an MCP server's free-form one, say) still works."""
    scripted.add_turns([tool_call("free", {"anything": {"a": None}}, "c1")], "Done.")
    schema: JSONObject = {"type": "object", "properties": {"anything": {"type": "object"}}}
    free = FunctionTool("free", "", schema)
    llm = server_llm()

    first = await llm.aresponses([Message.user("Hi")], [free])
    await llm.aresponses([Message.user("Hi")], [free])

    assert wire[0]["tools"][0]["strict"] is False
    assert wire[0]["tools"][0]["parameters"] == schema
    assert first.tool_calls[0].parsed_arguments() == {"anything": {"a": None}}  # untouched
    warnings = [r for r in caplog.records if "sent non-strict" in r.getMessage()]
    assert len(warnings) == 1  # once per tool
    assert "parameters.properties.anything is an object without properties" in warnings[0].message
