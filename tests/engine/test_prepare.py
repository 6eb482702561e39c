"""Preparing a response: a request checked, its model resolved, its tools planned and its input
turned into the first chat request, on real storage (SQLite and PostgreSQL), with the scripted
model as the provider."""

from __future__ import annotations

import json

import pytest

from agentloom.api.conversations import CreateConversationRequest
from agentloom.api.items import FunctionCall, Message
from agentloom.api.requests import CreateResponseRequest
from agentloom.engine.compaction import Compactions
from agentloom.engine.context import History
from agentloom.engine.items import StoredItemFinder
from agentloom.engine.loop import AgentLoop
from agentloom.engine.prepare import EngineLimits, Preparer
from agentloom.engine.reasoning import SealedReasoning
from agentloom.errors import (
    AgentloomError,
    ConversationLockedError,
    InvalidRequestError,
    NotFoundError,
)
from agentloom.inference import base as inf
from agentloom.inference.base import ChatMessage, ProviderConfig
from agentloom.inference.catalog import ModelCatalog
from agentloom.inference.scripted import ScriptedModel, tool_call
from agentloom.sealing import Sealer, SealingKey
from agentloom.services.conversations import ConversationsService
from agentloom.storage.base import ItemRow, ResponseRow
from agentloom.storage.database import Database

WEATHER = {"type": "function", "name": "get_weather", "parameters": {"type": "object"}}


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel(context_window=1000)


@pytest.fixture
def conversations(database: Database) -> ConversationsService:
    compactions = Compactions(Sealer([SealingKey.new()]))
    finder = StoredItemFinder(database.responses, database.conversations)
    return ConversationsService(
        store=database.conversations, finder=finder, reader=compactions.read
    )


def make_preparer(
    database: Database, model: ScriptedModel, conversations: ConversationsService
) -> Preparer:
    sealer = Sealer([SealingKey.new()])
    compactions = Compactions(sealer)
    config = ProviderConfig(name="local", models=("scripted",), discover=False)
    return Preparer(
        catalog=ModelCatalog({"local": model}, {"local": config}),
        finder=StoredItemFinder(database.responses, database.conversations),
        histories=History(database.responses, compactions.read),
        conversations=conversations,
        compactions=compactions,
        sealed_reasoning=SealedReasoning(sealer),
        limits=EngineLimits(max_model_calls=5, truncation_retries=1),
    )


@pytest.fixture
def preparer(
    database: Database, model: ScriptedModel, conversations: ConversationsService
) -> Preparer:
    return make_preparer(database, model, conversations)


def request(**fields: object) -> CreateResponseRequest:
    return CreateResponseRequest.model_validate({"model": "scripted", "input": "Hi", **fields})


async def refused(preparer: Preparer, **fields: object) -> AgentloomError:
    with pytest.raises(AgentloomError) as caught:
        await preparer.prepare(request(**fields))
    return caught.value


# --- what is prepared ------------------------------------------------------------------------


async def test_string_input_is_one_user_message_after_the_instructions(
    preparer: Preparer,
) -> None:
    prepared = await preparer.prepare(request(instructions="Be brief."))

    [item] = prepared.input_items
    assert isinstance(item, Message)
    assert item.id is not None
    assert item.id.startswith("msg_")
    assert (item.role, item.text(), item.status) == ("user", "Hi", "completed")
    assert prepared.loop.request.messages == (
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="user", content="Hi"),
    )
    assert prepared.seen.items == (item,)
    assert prepared.hold is None
    assert prepared.store is True


async def test_the_response_skeleton_echoes_the_request(preparer: Preparer) -> None:
    prepared = await preparer.prepare(
        request(instructions="Be brief.", metadata={"k": "v"}, max_output_tokens=64)
    )

    response = prepared.response
    assert response.id.startswith("resp_")
    assert response.status == "in_progress"
    assert (response.model, response.instructions) == ("scripted", "Be brief.")
    assert response.metadata == {"k": "v"}
    assert response.max_output_tokens == 64
    assert response.output == []


async def test_the_loop_gets_the_limits_the_provider_and_the_backend_model(
    preparer: Preparer, model: ScriptedModel
) -> None:
    prepared = await preparer.prepare(
        request(model="local/scripted", max_output_tokens=64, max_tool_calls=2, truncation="auto")
    )

    loop = prepared.loop
    assert loop.provider is model
    assert loop.request.model == "scripted"
    assert (loop.max_output_tokens, loop.max_tool_calls) == (64, 2)
    assert (loop.max_model_calls, loop.truncation_retries, loop.truncation) == (5, 1, "auto")
    assert loop.compaction is None


async def test_tools_and_their_choice_reach_the_chat_request(preparer: Preparer) -> None:
    prepared = await preparer.prepare(
        request(tools=[WEATHER], tool_choice="required", parallel_tool_calls=False)
    )

    chat = prepared.loop.request
    assert [spec.name for spec in chat.tools] == ["get_weather"]
    assert chat.tool_choice == "required"
    assert chat.parallel_tool_calls is False
    assert prepared.loop.tools.policy.required is True


async def test_logprobs_are_asked_for_only_when_included(preparer: Preparer) -> None:
    plain = await preparer.prepare(request(top_logprobs=3))
    included = await preparer.prepare(
        request(top_logprobs=3, include=["message.output_text.logprobs"])
    )

    assert plain.loop.request.top_logprobs is None
    assert plain.loop.include_logprobs is False
    assert included.loop.request.top_logprobs == 3
    assert included.loop.include_logprobs is True


async def test_a_json_object_text_format_is_the_response_format(preparer: Preparer) -> None:
    prepared = await preparer.prepare(request(text={"format": {"type": "json_object"}}))

    assert prepared.loop.request.response_format == "json_object"


async def test_a_replayed_call_and_its_output_become_chat_messages(preparer: Preparer) -> None:
    replay = [
        {"role": "user", "content": "Weather?"},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "rain"},
    ]

    prepared = await preparer.prepare(request(input=replay, tools=[WEATHER]))

    assert [m.role for m in prepared.loop.request.messages] == ["user", "assistant", "tool"]
    assert prepared.loop.request.messages[2] == ChatMessage(
        role="tool", content="rain", tool_call_id="call_1"
    )
    assert all(item.id is not None for item in prepared.input_items)


async def test_the_previous_response_chain_comes_before_the_input(
    preparer: Preparer, database: Database
) -> None:
    row = ResponseRow(
        id="resp_1",
        created_at=1.0,
        model="scripted",
        status="completed",
        previous_response_id=None,
        body=json.dumps({"id": "resp_1"}),
    )
    asked = {"type": "message", "id": "msg_1", "role": "user", "content": "One?"}
    answered = {"type": "message", "id": "msg_2", "role": "assistant", "content": "One."}
    await database.responses.save(
        row,
        [ItemRow(id="msg_1", body=json.dumps(asked))],
        [ItemRow(id="msg_2", body=json.dumps(answered))],
    )

    prepared = await preparer.prepare(request(input="Two?", previous_response_id="resp_1"))

    assert prepared.loop.request.messages == (
        ChatMessage(role="user", content="One?"),
        ChatMessage(role="assistant", content="One."),
        ChatMessage(role="user", content="Two?"),
    )
    assert [item.id for item in prepared.seen.items][:2] == ["msg_1", "msg_2"]


async def test_a_conversation_is_held_until_released(
    preparer: Preparer, conversations: ConversationsService
) -> None:
    created = await conversations.create(
        CreateConversationRequest.model_validate(
            {"items": [{"role": "user", "content": "Earlier."}]}
        )
    )

    prepared = await preparer.prepare(request(conversation=created.id))

    assert prepared.hold is not None
    assert [m.content for m in prepared.loop.request.messages] == ["Earlier.", "Hi"]
    with pytest.raises(ConversationLockedError):
        await preparer.prepare(request(conversation=created.id))
    await conversations.release(prepared.hold.turn)
    again = await preparer.prepare(request(conversation=created.id))
    assert again.hold is not None
    await conversations.release(again.hold.turn)


async def test_a_compaction_threshold_defaults_to_most_of_the_context_window(
    database: Database, model: ScriptedModel, conversations: ConversationsService
) -> None:
    sealer = Sealer([SealingKey.new()])
    compactions = Compactions(sealer)
    catalog = ModelCatalog({"local": model}, {"local": ProviderConfig(name="local")})
    await catalog.refresh()  # discovers the scripted model and its context window
    preparer = Preparer(
        catalog=catalog,
        finder=StoredItemFinder(database.responses, database.conversations),
        histories=History(database.responses, compactions.read),
        conversations=conversations,
        compactions=compactions,
        sealed_reasoning=SealedReasoning(sealer),
        limits=EngineLimits(),
    )

    prepared = await preparer.prepare(request(context_management=[{"type": "compaction"}]))

    assert prepared.loop.context_window == 1000
    assert prepared.loop.compaction is not None
    assert prepared.loop.compaction.threshold == 800


async def test_a_prepared_response_runs_on_the_loop(
    preparer: Preparer, model: ScriptedModel
) -> None:
    model.add_turn(tool_call("get_weather", {"city": "Oslo"}, "call_1"))
    prepared = await preparer.prepare(request(tools=[WEATHER]))
    loop = AgentLoop(prepared.response, prepared.loop)

    async for _ in loop.run():
        pass

    assert loop.response.status == "completed"
    [call] = loop.response.output
    assert isinstance(call, FunctionCall)
    assert (call.name, call.arguments) == ("get_weather", '{"city": "Oslo"}')
    [sent] = model.requests
    assert sent.messages == prepared.loop.request.messages
    assert sent.tools == (inf.FunctionSpec("get_weather", None, {"type": "object"}, True),)


# --- what is refused before anything runs ----------------------------------------------------


async def test_a_function_call_output_without_its_call_is_a_400_naming_input_i(
    preparer: Preparer, model: ScriptedModel
) -> None:
    orphan = {"type": "function_call_output", "call_id": "call_nowhere", "output": "x"}

    error = await refused(preparer, input=[{"role": "user", "content": "Hi"}, orphan])

    assert isinstance(error, InvalidRequestError)
    assert error.param == "input[1]"
    assert model.requests == []


@pytest.mark.parametrize(
    ("fields", "param", "code"),
    [
        ({"input": []}, "input", "missing_required_parameter"),
        ({"background": True, "store": False}, "background", None),
        (
            {"conversation": "conv_1", "previous_response_id": "resp_1"},
            "previous_response_id",
            None,
        ),
        ({"guardrails": ["shield"]}, "guardrails", None),
        ({"tool_choice": {"type": "function", "name": "get_time"}}, "tool_choice", None),
    ],
)
async def test_a_bad_request_is_a_400(
    preparer: Preparer, fields: dict[str, object], param: str, code: str | None
) -> None:
    error = await refused(preparer, **fields)

    assert isinstance(error, InvalidRequestError)
    assert error.param == param
    if code is not None:
        assert error.code == code


@pytest.mark.parametrize(
    ("fields", "param", "code"),
    [
        ({"model": "nowhere"}, "model", "model_not_found"),
        (
            {"previous_response_id": "resp_missing"},
            "previous_response_id",
            "previous_response_not_found",
        ),
        ({"input": [{"type": "item_reference", "id": "msg_missing"}]}, "input[0].id", None),
    ],
)
async def test_what_a_request_names_must_exist(
    preparer: Preparer, fields: dict[str, object], param: str, code: str | None
) -> None:
    error = await refused(preparer, **fields)

    assert isinstance(error, NotFoundError)
    assert error.param == param
    assert error.code == code


async def test_compaction_needs_a_threshold_when_the_window_is_unknown(
    preparer: Preparer,
) -> None:
    error = await refused(preparer, context_management=[{"type": "compaction"}])

    assert isinstance(error, InvalidRequestError)
    assert error.param == "context_management[0].compact_threshold"
    assert error.code == "missing_required_parameter"
