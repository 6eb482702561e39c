"""Stateful mode on the Responses path: only new items and ``previous_response_id`` are sent, an
expired id is retried once with the whole history, and chat cannot continue such a state."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from agentloom.inference.scripted import ScriptedModel, reasoning, tool_call
from agentloom.llm import ConversationState, FunctionTool, LLMStateError, Message
from tests.llm.conftest import MakeLLM

LOOKUP = FunctionTool("lookup", "Look a word up.", {"type": "object", "properties": {}})


async def test_stateful_sends_only_new_items_after_the_previous_response(
    server_llm: MakeLLM, scripted: ScriptedModel, wire: list[dict[str, Any]]
) -> None:
    scripted.add_turns([reasoning("Hm."), tool_call("lookup", {}, "call_1")], "Found it.")
    llm = server_llm("stateful")
    state = ConversationState()
    history = [Message.system("Be brief."), Message.user("Define loom.")]

    first = await llm.chat(history, [LOOKUP], state=state)
    assert (state.previous_response_id, state.sent, state.model) == (
        first.response_id,
        3,
        llm.model,
    )
    history += [first.message, Message.tool("call_1", "a weaving frame")]
    second = await llm.chat(history, [LOOKUP], state=state)

    assert second.text == "Found it."
    assert wire[0]["store"] is True
    assert "previous_response_id" not in wire[0]
    assert wire[1]["store"] is True
    assert wire[1]["previous_response_id"] == first.response_id
    assert wire[1]["instructions"] == "Be brief."
    assert wire[1]["input"] == [
        {"type": "function_call_output", "call_id": "call_1", "output": "a weaving frame"}
    ]
    seen = scripted.requests[-1].messages  # the server rebuilt the whole history
    assert [m.role for m in seen] == ["system", "user", "assistant", "tool"]
    assert seen[2].reasoning == "Hm."
    assert (state.previous_response_id, state.sent) == (second.response_id, 5)


async def test_an_expired_previous_response_is_retried_with_the_whole_history(
    server_llm: MakeLLM,
    scripted: ScriptedModel,
    wire: list[dict[str, Any]],
    client: openai.AsyncOpenAI,
) -> None:
    scripted.add_turns("Hello!", "Still here.")
    llm = server_llm("stateful")
    state = ConversationState()
    history = [Message.user("Hi")]
    first = await llm.chat(history, state=state)
    assert first.response_id is not None
    await client.responses.delete(first.response_id)

    history += [first.message, Message.user("Are you there?")]
    second = await llm.chat(history, state=state)

    assert second.text == "Still here."
    assert len(wire) == 3  # the first call, the rejected continuation, the full replay
    assert wire[1]["previous_response_id"] == first.response_id
    assert "previous_response_id" not in wire[2]
    assert wire[2]["store"] is True
    assert wire[2]["input"] == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "Are you there?"},
    ]
    assert (state.previous_response_id, state.sent) == (second.response_id, 4)
    assert len(scripted.requests) == 2


async def test_an_expired_id_without_stateful_mode_is_not_retried(
    server_llm: MakeLLM, scripted: ScriptedModel, wire: list[dict[str, Any]]
) -> None:
    llm = server_llm("stateless")
    state = ConversationState(previous_response_id="resp_gone", sent=1)
    scripted.add_turn("Hello!")

    reply = await llm.chat([Message.user("Hi")], state=state)

    assert reply.text == "Hello!"
    assert "previous_response_id" not in wire[0]
    assert wire[0]["store"] is False
    assert state.previous_response_id == "resp_gone"  # stateless mode leaves the state alone


async def test_a_stateful_conversation_cannot_move_to_chat_completions(
    server_llm: MakeLLM, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hello!")
    llm = server_llm("stateful")
    state = ConversationState()
    history = [Message.user("Hi")]
    history.append((await llm.chat(history, state=state)).message)

    local = llm.with_model("llama-3", path=None)
    assert local.path == "completions"
    with pytest.raises(LLMStateError) as caught:
        await local.chat([*history, Message.user("Again")], state=state)

    message = str(caught.value)
    assert "'llama-3'" in message
    assert "Chat Completions" in message
    assert str(state.previous_response_id) in message
    assert "stateless" in message
    assert len(scripted.requests) == 1  # nothing was sent
