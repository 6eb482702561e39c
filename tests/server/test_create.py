"""``POST /v1/responses``: what the backend is sent, and the Response object that comes back."""

from __future__ import annotations

from typing import Any, cast

import openai
import pytest
from openai.types.responses import ResponseFormatTextJSONSchemaConfig, ResponseInputItemParam
from pydantic import BaseModel

from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import (
    ScriptedModel,
    ScriptItem,
    finish,
    reasoning,
    text,
    tool_call,
    usage,
)
from agentloom.testing.backend import FakeBackend

PNG_DATA_URL = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgAAIAAAUAAeImBZsAAAAASUVORK5CYII="
)
IMAGE_URL = "https://example.com/cat.png"


class Place(BaseModel):
    city: str
    country: str


def sent(backend: FakeBackend, index: int = -1) -> dict[str, Any]:
    """A chat request body the backend received (the last one by default)."""
    return cast("dict[str, Any]", backend.requests[index])


def messages(backend: FakeBackend, index: int = -1) -> list[dict[str, Any]]:
    return cast("list[dict[str, Any]]", sent(backend, index)["messages"])


def wire(*items: dict[str, Any]) -> list[ResponseInputItemParam]:
    """Input items as raw JSON: some valid shapes match none of the SDK's TypedDicts."""
    return cast("list[ResponseInputItemParam]", list(items))


# --- input ---------------------------------------------------------------------------------


async def test_string_input_is_one_user_message(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hello!")

    response = await client.responses.create(model=backend.model, input="Hi there")

    assert response.status == "completed"
    assert response.output_text == "Hello!"
    assert messages(backend) == [{"role": "user", "content": "Hi there"}]
    assert sent(backend)["model"] == backend.model
    assert sent(backend)["stream"] is False  # a non-streamed reply asks for a whole answer


async def test_easy_messages_of_every_role(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("ok")

    await client.responses.create(
        model=backend.model,
        input=[
            {"role": "system", "content": "Be terse."},
            {"role": "developer", "content": "Answer in French."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Bonjour."},
            {"role": "user", "content": "How are you?"},
        ],
    )

    assert messages(backend) == [
        {"role": "system", "content": "Be terse."},
        {"role": "system", "content": "Answer in French."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Bonjour."},
        {"role": "user", "content": "How are you?"},
    ]


async def test_message_items_with_text_parts(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("ok")

    await client.responses.create(
        model=backend.model,
        input=wire(
            {
                "type": "message",
                "role": "system",
                "content": [{"type": "input_text", "text": "System."}],
            },
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "Rules."}],
            },
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "Hello, "},
                    {"type": "input_text", "text": "world"},
                ],
            },
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Hi!", "annotations": []}],
            },
            {"type": "message", "role": "user", "content": "Again"},
        ),
    )

    assert messages(backend) == [
        {"role": "system", "content": "System."},
        {"role": "system", "content": "Rules."},
        {"role": "user", "content": "Hello, world"},
        {"role": "assistant", "content": "Hi!"},
        {"role": "user", "content": "Again"},
    ]


async def test_input_images_by_url_and_data_url(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Two cats.")

    response = await client.responses.create(
        model=backend.model,
        input=[
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "What is in these?"},
                    {"type": "input_image", "image_url": IMAGE_URL, "detail": "low"},
                    {"type": "input_image", "image_url": PNG_DATA_URL, "detail": "auto"},
                ],
            }
        ],
    )

    assert response.output_text == "Two cats."
    assert messages(backend) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in these?"},
                {"type": "image_url", "image_url": {"url": IMAGE_URL, "detail": "low"}},
                {"type": "image_url", "image_url": {"url": PNG_DATA_URL, "detail": "auto"}},
            ],
        }
    ]


async def test_replayed_function_call_and_output(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("It is sunny.")

    response = await client.responses.create(
        model=backend.model,
        input=[
            {"role": "user", "content": "Weather in Paris?"},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "get_weather",
                "arguments": '{"city": "Paris"}',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": '{"sky": "clear"}'},
        ],
    )

    assert response.status == "completed"
    assert messages(backend) == [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "content": '{"sky": "clear"}', "tool_call_id": "call_1"},
    ]


async def test_item_reference_resolves_stored_items(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns("Paris.", "About two million.")
    first = await client.responses.create(model=backend.model, input="Capital of France?")
    inputs = await client.responses.input_items.list(first.id)
    answer = first.output[0]

    await client.responses.create(
        model=backend.model,
        input=wire(
            {"type": "item_reference", "id": inputs.data[0].id},
            {"type": "item_reference", "id": answer.id},
            {"role": "user", "content": "Population?"},
        ),
    )

    assert messages(backend) == [
        {"role": "user", "content": "Capital of France?"},
        {"role": "assistant", "content": "Paris."},
        {"role": "user", "content": "Population?"},
    ]


async def test_unknown_item_reference_is_not_found(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        await client.responses.create(
            model=backend.model, input=[{"type": "item_reference", "id": "msg_missing"}]
        )

    assert caught.value.body is not None
    assert cast("dict[str, Any]", caught.value.body)["param"] == "input[0].id"
    assert backend.requests == []


async def test_unknown_top_level_fields_are_accepted(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("fine")

    response = await client.responses.create(
        model=backend.model,
        input="Hi",
        extra_body={"some_future_field": {"nested": True}, "another": 3},
    )

    assert response.status == "completed"
    assert "some_future_field" not in sent(backend)
    assert "another" not in sent(backend)


# --- instructions and previous_response_id -------------------------------------------------


async def test_instructions_go_first_as_system_message(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Ahoy.")

    response = await client.responses.create(
        model=backend.model,
        instructions="Talk like a pirate.",
        input=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
    )

    assert response.instructions == "Talk like a pirate."
    assert messages(backend) == [
        {"role": "system", "content": "Talk like a pirate."},
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
    ]


async def test_instructions_are_not_inherited(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns("Ahoy.", "Hello.", "Bonjour.")
    first = await client.responses.create(
        model=backend.model, instructions="Talk like a pirate.", input="Hi"
    )

    second = await client.responses.create(
        model=backend.model, previous_response_id=first.id, input="Again"
    )
    assert second.instructions is None
    assert messages(backend) == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Ahoy."},
        {"role": "user", "content": "Again"},
    ]

    await client.responses.create(
        model=backend.model,
        previous_response_id=second.id,
        instructions="Speak French.",
        input="Once more",
    )
    sent_messages = messages(backend)
    assert sent_messages[0] == {"role": "system", "content": "Speak French."}
    assert [m["content"] for m in sent_messages if m["role"] == "system"] == ["Speak French."]


async def forget_cached_chains(client: openai.AsyncOpenAI) -> None:
    """Make the next ``previous_response_id`` read its chain from the database.

    Chains of finished responses are cached in process; any delete clears that cache.
    """
    with pytest.raises(openai.NotFoundError):
        await client.responses.delete("resp_does_not_exist")


@pytest.mark.parametrize("source", ["cache", "database"])
async def test_previous_response_chain_of_three_turns(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel, source: str
) -> None:
    scripted.add_turn(reasoning("Greeting."), "Hello!")
    scripted.add_turn(tool_call("lookup", {"q": "name"}, call_id="call_a"))
    scripted.add_turn("Your name is Ada.")

    first = await client.responses.create(model=backend.model, input="Hi")
    if source == "database":
        await forget_cached_chains(client)
    second = await client.responses.create(
        model=backend.model,
        previous_response_id=first.id,
        input="What is my name?",
        tools=[
            {
                "type": "function",
                "name": "lookup",
                "parameters": {"type": "object"},
                "strict": False,
            }
        ],
    )
    if source == "database":
        await forget_cached_chains(client)
    third = await client.responses.create(
        model=backend.model,
        previous_response_id=second.id,
        input=[{"type": "function_call_output", "call_id": "call_a", "output": "Ada"}],
    )

    assert third.previous_response_id == second.id
    assert third.output_text == "Your name is Ada."
    call = {
        "id": "call_a",
        "type": "function",
        "function": {"name": "lookup", "arguments": '{"q": "name"}'},
    }
    assert messages(backend) == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!", "reasoning_content": "Greeting."},
        {"role": "user", "content": "What is my name?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "content": "Ada", "tool_call_id": "call_a"},
    ]


async def test_unknown_previous_response_is_not_found(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        await client.responses.create(
            model=backend.model, previous_response_id="resp_missing", input="Hi"
        )

    assert caught.value.code == "previous_response_not_found"
    assert backend.requests == []


# --- parameters forwarded to the backend ---------------------------------------------------


async def test_logprobs_are_not_asked_for_unless_included(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("ok")

    await client.responses.create(model=backend.model, input="Hi", top_logprobs=3)

    body = sent(backend)
    assert "logprobs" not in body
    assert "top_logprobs" not in body


async def test_sampling_parameters_are_forwarded(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("ok")

    await client.responses.create(
        model=backend.model,
        input="Hi",
        temperature=0.3,
        top_p=0.9,
        max_output_tokens=200,
        top_logprobs=5,
        include=["message.output_text.logprobs"],
        reasoning={"effort": "low"},
    )

    body = sent(backend)
    assert body["temperature"] == 0.3
    assert body["top_p"] == 0.9
    assert body["max_tokens"] == 200
    assert body["logprobs"] is True
    assert body["top_logprobs"] == 5
    assert body["reasoning_effort"] == "low"
    assert "response_format" not in body


async def test_max_output_tokens_is_a_budget_for_the_whole_response(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    # A call to a tool that was not offered makes the server call the model again.
    scripted.add_turn(tool_call("unoffered"), usage(10, 30))
    scripted.add_turn(tool_call("unoffered"), usage(10, 20))
    scripted.add_turn("never played")

    response = await client.responses.create(model=backend.model, input="Hi", max_output_tokens=50)

    assert [sent(backend, i)["max_tokens"] for i in range(len(backend.requests))] == [50, 20]
    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"
    assert scripted.remaining == 1


async def test_unset_parameters_are_not_sent(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("ok")

    await client.responses.create(model=backend.model, input="Hi")

    body = sent(backend)
    for name in ("temperature", "top_p", "max_tokens", "logprobs", "reasoning_effort", "tools"):
        assert name not in body, name


async def test_json_schema_text_format_is_forwarded(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    }
    scripted.add_turn('{"city": "Paris"}')

    response = await client.responses.create(
        model=backend.model,
        input="Where?",
        text={
            "format": {
                "type": "json_schema",
                "name": "place",
                "schema": schema,
                "strict": True,
                "description": "A place.",
            }
        },
    )

    assert sent(backend)["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "place",
            "schema": schema,
            "strict": True,
            "description": "A place.",
        },
    }
    assert response.output_text == '{"city": "Paris"}'
    for echoed in (response, await client.responses.retrieve(response.id)):
        assert echoed.text is not None
        fmt = echoed.text.format
        assert isinstance(fmt, ResponseFormatTextJSONSchemaConfig)
        assert (fmt.name, fmt.schema_, fmt.strict) == ("place", schema, True)
        assert fmt.description == "A place."


async def test_parse_with_a_pydantic_text_format(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn('{"city": "Paris", "country": "France"}')

    parsed = await client.responses.parse(model=backend.model, input="Where?", text_format=Place)

    assert parsed.output_parsed == Place(city="Paris", country="France")
    fmt = sent(backend)["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "Place"
    assert fmt["json_schema"]["strict"] is True
    assert set(fmt["json_schema"]["schema"]["properties"]) == {"city", "country"}


async def test_json_object_text_format_is_forwarded(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("{}")

    await client.responses.create(
        model=backend.model, input="JSON please", text={"format": {"type": "json_object"}}
    )

    assert sent(backend)["response_format"] == {"type": "json_object"}


# --- the Response object -------------------------------------------------------------------


async def test_response_defaults_are_real_values(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hi!")

    response = await client.responses.create(model=backend.model, input="Hi")
    extra = response.model_extra or {}

    assert response.object == "response"
    assert response.id.startswith("resp_")
    assert response.model == backend.model
    assert response.temperature == 1.0
    assert response.top_p == 1.0
    assert response.top_logprobs == 0
    assert extra["presence_penalty"] == 0.0
    assert extra["frequency_penalty"] == 0.0
    assert extra["store"] is True
    assert response.tools == []
    assert response.tool_choice == "auto"
    assert response.truncation == "disabled"
    assert response.parallel_tool_calls is True
    assert response.text is not None
    assert response.text.format is not None
    assert response.text.format.type == "text"
    assert response.background is False
    assert response.service_tier == "default"
    assert response.metadata == {}
    assert response.error is None
    assert response.incomplete_details is None
    assert response.completed_at is not None
    assert response.completed_at >= response.created_at


async def test_request_parameters_are_echoed(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("ok")

    response = await client.responses.create(
        model=backend.model,
        input="Hi",
        temperature=0.5,
        top_p=0.25,
        top_logprobs=3,
        max_output_tokens=100,
        max_tool_calls=4,
        truncation="auto",
        parallel_tool_calls=False,
        tool_choice="none",
        tools=[
            {"type": "function", "name": "noop", "parameters": {"type": "object"}, "strict": False}
        ],
        reasoning={"effort": "high"},
        service_tier="flex",
        store=True,
        user="user-1",
        prompt_cache_key="cache-1",
        safety_identifier="safe-1",
        extra_body={"presence_penalty": 0.5, "frequency_penalty": -0.5},
    )
    extra = response.model_extra or {}

    assert response.temperature == 0.5
    assert response.top_p == 0.25
    assert response.top_logprobs == 3
    assert response.max_output_tokens == 100
    assert response.max_tool_calls == 4
    assert response.truncation == "auto"
    assert response.parallel_tool_calls is False
    assert response.tool_choice == "none"
    assert [tool.type for tool in response.tools] == ["function"]
    assert response.reasoning is not None
    assert response.reasoning.effort == "high"
    assert response.service_tier == "flex"
    assert response.user == "user-1"
    assert response.prompt_cache_key == "cache-1"
    assert response.safety_identifier == "safe-1"
    assert extra["presence_penalty"] == 0.5
    assert extra["frequency_penalty"] == -0.5
    body = sent(backend)
    assert body["presence_penalty"] == 0.5
    assert body["frequency_penalty"] == -0.5
    assert body["service_tier"] == "flex"
    assert body["user"] == "user-1"
    assert body["prompt_cache_key"] == "cache-1"
    assert body["safety_identifier"] == "safe-1"


async def test_usage_reports_cached_and_reasoning_tokens(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(
        reasoning("hmm"), "Done.", usage(120, 30, cached_tokens=100, reasoning_tokens=12)
    )

    response = await client.responses.create(model=backend.model, input="Hi")

    assert response.usage is not None
    assert response.usage.input_tokens == 120
    assert response.usage.input_tokens_details.cached_tokens == 100
    assert response.usage.output_tokens == 30
    assert response.usage.output_tokens_details.reasoning_tokens == 12
    assert response.usage.total_tokens == 150


async def test_usage_adds_up_over_model_calls(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    # A call to a tool that was not offered makes the server call the model again.
    scripted.add_turn(tool_call("unoffered"), usage(10, 2, cached_tokens=4))
    scripted.add_turn("Sorry.", usage(20, 3, reasoning_tokens=1))

    response = await client.responses.create(model=backend.model, input="Hi")

    assert len(backend.requests) == 2
    assert response.usage is not None
    assert response.usage.input_tokens == 30
    assert response.usage.input_tokens_details.cached_tokens == 4
    assert response.usage.output_tokens == 5
    assert response.usage.output_tokens_details.reasoning_tokens == 1
    assert response.usage.total_tokens == 35


async def test_metadata_is_echoed_and_stored(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("ok")
    metadata = {"user": "u-42", "purpose": "test"}

    response = await client.responses.create(model=backend.model, input="Hi", metadata=metadata)

    assert response.metadata == metadata
    assert (await client.responses.retrieve(response.id)).metadata == metadata


# --- output ---------------------------------------------------------------------------------


async def test_reasoning_becomes_an_item_before_the_message(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(reasoning("First, think. ", chunk_size=4), text("Answer.", chunk_size=2))

    response = await client.responses.create(model=backend.model, input="Q?")

    assert [item.type for item in response.output] == ["reasoning", "message"]
    thought, message = response.output
    assert thought.type == "reasoning"
    assert thought.id.startswith("rs_")
    assert thought.content is not None
    assert [part.text for part in thought.content] == ["First, think. "]
    assert thought.status == "completed"
    assert message.type == "message"
    assert message.id.startswith("msg_")
    assert message.role == "assistant"
    assert message.status == "completed"
    assert [part.type for part in message.content] == ["output_text"]
    assert response.output_text == "Answer."


async def test_reasoning_backend_field_name_variant(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    backend.reasoning_field = "reasoning"
    scripted.add_turn(reasoning("Thinking."), "Answer.")

    response = await client.responses.create(model=backend.model, input="Q?")

    assert [item.type for item in response.output] == ["reasoning", "message"]


async def test_length_finish_is_incomplete(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("The beginning of a long", finish("length"))

    response = await client.responses.create(model=backend.model, input="Tell a story")

    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"
    assert response.output_text == "The beginning of a long"
    assert response.completed_at is None
    stored = await client.responses.retrieve(response.id)
    assert stored.status == "incomplete"


async def test_content_filter_finish_is_incomplete(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("I can", finish("content_filter"))

    response = await client.responses.create(model=backend.model, input="Something bad")

    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "content_filter"


async def test_max_model_calls_makes_the_response_incomplete(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    # The model keeps calling a tool it was not offered; the server asks it again each time,
    # up to the configured limit of model calls (10 in the test settings).
    def stubborn(request: ChatRequest) -> list[ScriptItem]:
        return [tool_call("unoffered", {})]

    scripted.respond_with(stubborn)

    response = await client.responses.create(model=backend.model, input="Hi")

    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_messages"
    assert len(backend.requests) == 10
    assert all(item.type != "function_call" for item in response.output)


async def test_output_items_can_be_replayed_as_input(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    # The documented stateless pattern: ``context += response.output``, store=False.
    scripted.add_turn(reasoning("Recall."), "Paris.")
    scripted.add_turn("About two million.")
    context: list[Any] = [{"role": "user", "content": "Capital of France?"}]
    first = await client.responses.create(model=backend.model, input=context, store=False)

    context += first.output
    context.append({"role": "user", "content": "Population?"})
    second = await client.responses.create(model=backend.model, input=context, store=False)

    assert second.output_text == "About two million."
    assert messages(backend) == [
        {"role": "user", "content": "Capital of France?"},
        {"role": "assistant", "content": "Paris.", "reasoning_content": "Recall."},
        {"role": "user", "content": "Population?"},
    ]
