"""Function tools: calls handed to the client, their outputs, and ``tool_choice`` enforcement."""

from __future__ import annotations

from typing import Any, cast

import httpx2
import openai
import pytest
from openai.types.responses import (
    EasyInputMessageParam,
    FunctionToolParam,
    ResponseFunctionToolCall,
    ResponseInputItemParam,
    ToolChoiceAllowed,
    ToolChoiceAllowedParam,
    ToolChoiceFunction,
    ToolChoiceFunctionParam,
)

from agentloom.inference.scripted import ScriptedModel, tool_call
from agentloom.testing.backend import FakeBackend

WEATHER_PARAMETERS: dict[str, object] = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
WEATHER: FunctionToolParam = {
    "type": "function",
    "name": "get_weather",
    "description": "The current weather in a city.",
    "parameters": WEATHER_PARAMETERS,
    "strict": True,
}
TIME: FunctionToolParam = {
    "type": "function",
    "name": "get_time",
    "parameters": {"type": "object", "properties": {}},
    "strict": False,
}
NEWS: FunctionToolParam = {
    "type": "function",
    "name": "get_news",
    "parameters": {"type": "object", "properties": {}},
    "strict": False,
}


def sent(backend: FakeBackend, index: int = -1) -> dict[str, Any]:
    """A chat request body the backend received (the last one by default)."""
    return cast("dict[str, Any]", backend.requests[index])


def offered(backend: FakeBackend, index: int = -1) -> list[str]:
    """The names of the tools offered to the backend in one chat request."""
    return [tool["function"]["name"] for tool in sent(backend, index).get("tools", [])]


def calls(response: openai.types.responses.Response) -> list[ResponseFunctionToolCall]:
    return [item for item in response.output if item.type == "function_call"]


# --- function calls ------------------------------------------------------------------------


async def test_function_call_is_returned_and_response_completes(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("get_weather", {"city": "Paris"}, call_id="call_w1", chunk_size=5))

    response = await client.responses.create(
        model=backend.model, input="Weather in Paris?", tools=[WEATHER]
    )

    assert response.status == "completed"
    assert [item.type for item in response.output] == ["function_call"]
    (call,) = calls(response)
    assert call.id is not None
    assert call.id.startswith("fc_")
    assert call.call_id == "call_w1"
    assert call.name == "get_weather"
    assert call.arguments == '{"city": "Paris"}'
    assert call.status == "completed"
    assert len(backend.requests) == 1
    assert sent(backend)["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": WEATHER_PARAMETERS,
                "description": "The current weather in a city.",
                "strict": True,
            },
        }
    ]
    assert sent(backend)["tool_choice"] == "auto"
    stored = await client.responses.retrieve(response.id)
    assert calls(stored) == [call]


async def test_echoed_tools_carry_strict_description_and_parameters(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("ok")

    response = await client.responses.create(
        model=backend.model,
        input="Hi",
        tools=[WEATHER, TIME, cast("FunctionToolParam", {"type": "function", "name": "bare"})],
    )

    weather, clock, bare = response.tools
    assert weather.type == clock.type == bare.type == "function"
    assert weather.name == "get_weather"
    assert weather.description == "The current weather in a city."
    assert weather.parameters == WEATHER_PARAMETERS
    assert weather.strict is True
    assert clock.name == "get_time"
    assert clock.strict is False
    assert clock.description is None
    assert bare.name == "bare"
    assert bare.parameters == {"type": "object", "properties": {}}
    assert bare.strict is True
    assert (await client.responses.retrieve(response.id)).tools == response.tools


async def test_continue_with_function_call_output_via_previous_response(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("get_weather", {"city": "Paris"}, call_id="call_w1"))
    scripted.add_turn("It is sunny in Paris.")
    first = await client.responses.create(
        model=backend.model, input="Weather in Paris?", tools=[WEATHER]
    )
    (call,) = calls(first)

    second = await client.responses.create(
        model=backend.model,
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}],
        tools=[WEATHER],
    )

    assert second.status == "completed"
    assert second.output_text == "It is sunny in Paris."
    assert sent(backend)["messages"] == [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_w1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "content": "sunny", "tool_call_id": "call_w1"},
    ]


async def test_continue_by_full_replay_without_storing(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("get_weather", {"city": "Oslo"}, call_id="call_o"))
    scripted.add_turn("Snow in Oslo.")
    question: EasyInputMessageParam = {"role": "user", "content": "Weather in Oslo?"}
    first = await client.responses.create(
        model=backend.model, input=[question], tools=[WEATHER], store=False
    )
    assert first.status == "completed"
    (call,) = calls(first)

    second = await client.responses.create(
        model=backend.model,
        input=[
            question,
            cast("ResponseInputItemParam", call.model_dump(exclude_none=True)),
            {"type": "function_call_output", "call_id": "call_o", "output": "snow"},
        ],
        tools=[WEATHER],
        store=False,
    )

    assert second.output_text == "Snow in Oslo."
    assert [m["role"] for m in sent(backend)["messages"]] == ["user", "assistant", "tool"]
    assert sent(backend)["messages"][1]["tool_calls"][0]["id"] == "call_o"
    assert sent(backend)["messages"][2] == {
        "role": "tool",
        "content": "snow",
        "tool_call_id": "call_o",
    }
    for unstored in (first, second):
        with pytest.raises(openai.NotFoundError):
            await client.responses.retrieve(unstored.id)


async def test_function_call_output_without_its_call_is_rejected(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model=backend.model,
            input=[{"type": "function_call_output", "call_id": "call_nowhere", "output": "x"}],
        )

    assert caught.value.param == "input[0]"
    assert backend.requests == []


# --- tool_choice ---------------------------------------------------------------------------


async def test_tool_choice_none_offers_no_tools_and_drops_calls(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("get_weather", {"city": "Rome"}))  # misbehaves
    scripted.add_turn("I cannot look that up.")

    response = await client.responses.create(
        model=backend.model, input="Weather in Rome?", tools=[WEATHER], tool_choice="none"
    )

    assert response.status == "completed"
    assert response.tool_choice == "none"
    assert [item.type for item in response.output] == ["message"]
    assert response.output_text == "I cannot look that up."
    first = sent(backend, 0)
    assert "tools" not in first or first.get("tool_choice") == "none"
    # The model is told the call was not possible, and asked again.
    retry = sent(backend, 1)["messages"]
    assert retry[-1]["role"] == "tool"
    assert "not available" in retry[-1]["content"]


async def test_tool_choice_required_is_forwarded(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("get_time"))

    response = await client.responses.create(
        model=backend.model, input="Time?", tools=[WEATHER, TIME], tool_choice="required"
    )

    assert response.tool_choice == "required"
    assert [call.name for call in calls(response)] == ["get_time"]
    assert sent(backend)["tool_choice"] == "required"
    assert offered(backend) == ["get_weather", "get_time"]


async def test_required_choice_answered_with_text_asks_the_model_again(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("I'd rather chat.")  # a backend that does not enforce tool_choice
    scripted.add_turn(tool_call("get_time"))

    response = await client.responses.create(
        model=backend.model, input="Time?", tools=[WEATHER, TIME], tool_choice="required"
    )

    assert [call.name for call in calls(response)] == ["get_time"]
    nudge = backend.requests[1]["messages"][-1]  # type: ignore[index]
    assert nudge["role"] == "user"  # type: ignore[index]
    assert "must call one of these tools now: get_time, get_weather" in nudge["content"]  # type: ignore[index]


async def test_named_function_choice_offers_and_forces_that_function(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("get_time"))  # misbehaves: a tool that is in 'tools', not chosen
    scripted.add_turn(tool_call("get_weather", {"city": "Lima"}))

    response = await client.responses.create(
        model=backend.model,
        input="Weather in Lima?",
        tools=[WEATHER, TIME],
        tool_choice={"type": "function", "name": "get_weather"},
    )

    assert isinstance(response.tool_choice, ToolChoiceFunction)
    assert response.tool_choice.name == "get_weather"
    assert [call.name for call in calls(response)] == ["get_weather"]
    assert [item.type for item in response.output] == ["function_call"]
    assert len(backend.requests) == 2
    for index in (0, 1):
        assert offered(backend, index) == ["get_weather"]
        assert sent(backend, index)["tool_choice"] == {
            "type": "function",
            "function": {"name": "get_weather"},
        }


async def test_allowed_tools_restrict_what_is_offered_and_accepted(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("get_news"))  # misbehaves: not among the allowed tools
    scripted.add_turn(tool_call("get_time"))

    response = await client.responses.create(
        model=backend.model,
        input="What time is it?",
        tools=[WEATHER, TIME, NEWS],
        tool_choice={
            "type": "allowed_tools",
            "mode": "required",
            "tools": [
                {"type": "function", "name": "get_weather"},
                {"type": "function", "name": "get_time"},
            ],
        },
    )

    assert isinstance(response.tool_choice, ToolChoiceAllowed)
    assert response.tool_choice.mode == "required"
    assert response.tool_choice.tools == [
        {"type": "function", "name": "get_weather"},
        {"type": "function", "name": "get_time"},
    ]
    assert [call.name for call in calls(response)] == ["get_time"]
    assert len(backend.requests) == 2
    assert offered(backend, 0) == ["get_weather", "get_time"]
    assert sent(backend, 0)["tool_choice"] == "required"
    assert "not available" in sent(backend, 1)["messages"][-1]["content"]


async def test_allowed_tools_auto_mode(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("No tool needed.")

    response = await client.responses.create(
        model=backend.model,
        input="Hi",
        tools=[WEATHER, TIME],
        tool_choice={
            "type": "allowed_tools",
            "mode": "auto",
            "tools": [{"type": "function", "name": "get_time"}],
        },
    )

    assert response.output_text == "No tool needed."
    assert offered(backend) == ["get_time"]
    assert sent(backend)["tool_choice"] == "auto"


@pytest.mark.parametrize(
    "choice",
    [
        {"type": "function", "name": "launch_rocket"},
        {
            "type": "allowed_tools",
            "mode": "auto",
            "tools": [{"type": "function", "name": "launch_rocket"}],
        },
    ],
    ids=["function", "allowed_tools"],
)
async def test_tool_choice_naming_an_unknown_tool_is_rejected(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    choice: ToolChoiceFunctionParam | ToolChoiceAllowedParam,
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model=backend.model,
            input="Hi",
            tools=[WEATHER],
            tool_choice=choice,
        )

    assert caught.value.param == "tool_choice"
    assert backend.requests == []


# --- parallel calls ------------------------------------------------------------------------


async def test_parallel_tool_calls_false_keeps_only_the_first_call(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(
        tool_call("get_weather", {"city": "Paris"}, call_id="call_1"),
        tool_call("get_weather", {"city": "Berlin"}, call_id="call_2"),
    )

    response = await client.responses.create(
        model=backend.model,
        input="Weather in Paris and Berlin?",
        tools=[WEATHER],
        parallel_tool_calls=False,
    )

    assert response.parallel_tool_calls is False
    assert [(c.call_id, c.arguments) for c in calls(response)] == [("call_1", '{"city": "Paris"}')]
    assert len(response.output) == 1
    assert sent(backend)["parallel_tool_calls"] is False


async def test_parallel_tool_calls_are_all_returned(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(
        tool_call("get_weather", {"city": "Paris"}, call_id="call_1"),
        tool_call("get_time", call_id="call_2"),
        tool_call("get_weather", {"city": "Berlin"}, call_id="call_3"),
    )
    scripted.add_turn("Done.")

    response = await client.responses.create(
        model=backend.model, input="Several things", tools=[WEATHER, TIME]
    )

    assert [(c.call_id, c.name) for c in calls(response)] == [
        ("call_1", "get_weather"),
        ("call_2", "get_time"),
        ("call_3", "get_weather"),
    ]
    assert len({c.id for c in calls(response)}) == 3
    assert "parallel_tool_calls" not in sent(backend)

    outputs: list[ResponseInputItemParam] = [
        {"type": "function_call_output", "call_id": c.call_id, "output": f"result {c.call_id}"}
        for c in calls(response)
    ]
    final = await client.responses.create(
        model=backend.model,
        previous_response_id=response.id,
        input=outputs,
        tools=[WEATHER, TIME],
    )

    assert final.output_text == "Done."
    sent_messages = sent(backend)["messages"]
    assert [m["role"] for m in sent_messages] == ["user", "assistant", "tool", "tool", "tool"]
    assert [c["id"] for c in sent_messages[1]["tool_calls"]] == ["call_1", "call_2", "call_3"]
    assert [m["tool_call_id"] for m in sent_messages[2:]] == ["call_1", "call_2", "call_3"]


# --- tool types that are not strings ---------------------------------------------------------


@pytest.mark.parametrize("kind", [{}, [], 1, None], ids=["object", "array", "number", "null"])
async def test_a_tool_whose_type_is_not_a_string_is_a_400(
    http: httpx2.AsyncClient, backend: FakeBackend, kind: object
) -> None:
    """Found by Schemathesis: an object as a tool's ``type`` reached a set lookup (a 500)."""
    tools = [{"type": kind, "name": "f"}]
    searched = {"type": "tool_search_output", "call_id": "c", "execution": "client", "tools": tools}
    for path, body in (
        ("/responses", {"model": backend.model, "input": "hi", "tools": tools}),
        ("/responses/compact", {"model": backend.model, "input": [searched]}),
    ):
        reply = await http.post(path, json=body)

        assert reply.status_code == 400, (path, reply.text)
        assert reply.json()["error"]["param"].startswith(("tools[0]", "input[0].tools[0]"))
    assert backend.requests == []
