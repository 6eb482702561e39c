"""The Responses request's shape, reading a Response back, and encrypted reasoning kept out of
logs and reprs."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from openai.types.responses import Response

from agentloom.errors import InvalidRequestError
from agentloom.inference.scripted import ScriptedModel, reasoning, text
from agentloom.llm import (
    CallOptions,
    ConversationState,
    FunctionTool,
    Message,
    MessageToolCall,
    Metrics,
    ReasoningItem,
    StateMode,
)
from agentloom.llm.responses import llm_response
from agentloom.llm.responses_request import ResponsesCall, request_params
from tests.llm.conftest import MakeLLM

SECRET = "gAAAA-very-secret-encrypted-reasoning"


def call(
    *messages: Message,
    tools: tuple[FunctionTool, ...] = (),
    options: CallOptions | None = None,
    mode: StateMode = "stateless",
    state: ConversationState | None = None,
    encrypted: bool = False,
) -> ResponsesCall:
    return ResponsesCall(
        model="gpt-5",
        messages=messages,
        tools=tools,
        options=options or CallOptions(),
        state=state,
        mode=mode,
        encrypted_reasoning=encrypted,
    )


def test_encrypted_reasoning_is_asked_for_only_when_stateless() -> None:
    stateless = request_params(call(Message.user("Hi"), encrypted=True))
    stateful = request_params(
        call(Message.user("Hi"), encrypted=True, mode="stateful", state=ConversationState())
    )

    assert stateless["include"] == ["reasoning.encrypted_content"]
    assert stateless["store"] is False
    assert "include" not in stateful
    assert stateful["store"] is True
    assert "include" not in request_params(call(Message.user("Hi")))


def test_a_reasoning_item_made_by_hand_is_sent_with_its_fields() -> None:
    item = ReasoningItem("rs_1", summary=("Thinking.",), encrypted_content=SECRET)
    assistant = Message("assistant", "Done.", reasoning_items=(item,))

    params = request_params(call(Message.user("Hi"), assistant))

    assert list(params["input"])[1] == {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "Thinking."}],
        "encrypted_content": SECRET,
    }


def test_stateful_mode_does_not_replay_reasoning_items() -> None:
    item = ReasoningItem("rs_1", item={"type": "reasoning", "id": "rs_1", "summary": []})
    assistant = Message(
        "assistant", tool_calls=(MessageToolCall("c1", "f"),), reasoning_items=(item,)
    )
    state = ConversationState()

    params = request_params(call(Message.user("Hi"), assistant, mode="stateful", state=state))

    assert [i.get("type") for i in params["input"]] == [None, "function_call"]


def test_tool_options_are_sent_only_with_tools() -> None:
    options = CallOptions(tool_choice="required", parallel_tool_calls=True)
    tool = FunctionTool("f")

    without = request_params(call(Message.user("Hi"), options=options))
    with_tools = request_params(call(Message.user("Hi"), tools=(tool,), options=options))

    assert "tool_choice" not in without
    assert "tools" not in without
    assert with_tools["tool_choice"] == "required"
    assert with_tools["parallel_tool_calls"] is True
    assert list(with_tools["tools"]) == [  # strict by default, the schema made strict
        {
            "type": "function",
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {},
                "required": [],
                "additionalProperties": False,
            },
            "strict": True,
        }
    ]


def test_a_json_object_answer() -> None:
    params = request_params(
        call(Message.user("Hi"), options=CallOptions(response_format="json_object"))
    )

    assert params["text"] == {"format": {"type": "json_object"}}


def test_a_tool_message_needs_its_call_id() -> None:
    with pytest.raises(InvalidRequestError, match="tool_call_id"):
        request_params(call(Message.user("Hi"), Message("tool", "42")))


def response_with_encrypted_reasoning() -> Response:
    return Response.model_validate(
        {
            "id": "resp_1",
            "object": "response",
            "created_at": 0,
            "model": "gpt-5-2025-08-07",
            "status": "completed",
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "output": [
                {
                    "type": "reasoning",
                    "id": "rs_1",
                    "summary": [{"type": "summary_text", "text": "Plan the answer."}],
                    "encrypted_content": SECRET,
                },
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "Hi!", "annotations": []}],
                },
            ],
        }
    )


def test_reading_a_response_keeps_encrypted_reasoning_out_of_sight() -> None:
    metrics = Metrics(path="responses", model="gpt-5", latency_ms=1.0)

    reply = llm_response(response_with_encrypted_reasoning(), metrics)

    (item,) = reply.message.reasoning_items
    assert item.encrypted_content == SECRET
    assert item.item["encrypted_content"] == SECRET  # kept, to be replayed verbatim
    assert item.summary == ("Plan the answer.",)
    assert (reply.text, reply.reasoning) == ("Hi!", "Plan the answer.")
    assert (reply.response_id, reply.model, reply.finish_reason) == (
        "resp_1",
        "gpt-5-2025-08-07",
        "stop",
    )
    for shown in (repr(item), str(item), repr(reply), str(reply.message), f"{reply}"):
        assert SECRET not in shown


async def test_encrypted_reasoning_is_sent_but_never_logged(
    server_llm: MakeLLM,
    scripted: ScriptedModel,
    wire: list[dict[str, Any]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    scripted.add_turns([reasoning("Plan the greeting."), text("Hello!")], "Fine.")
    llm = server_llm(encrypted_reasoning=True)
    first = await llm.chat([Message.user("Hi")])
    (item,) = first.message.reasoning_items
    sealed = item.encrypted_content  # sealed by the agentloom server
    assert sealed
    history = [Message.user("Hi"), first.message, Message.user("How are you?")]

    reply = await llm.chat(history)

    assert reply.text == "Fine."
    assert wire[1]["include"] == ["reasoning.encrypted_content"]
    assert wire[1]["input"][1]["encrypted_content"] == sealed
    assert scripted.requests[1].messages[-2].reasoning == "Plan the greeting."  # opened
    assert caplog.records  # debug logging was on
    assert sealed not in caplog.text
    assert sealed not in repr(history)
    assert sealed not in repr(reply)
