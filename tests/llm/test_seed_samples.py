"""The OpenHands seed's tool-result threading samples (001 §13.1 and §13.2) as this adapter
sends them: the same conversation, the same call id threaded through, on each path.

Adapted where agentloom's wire differs and says so in docs/llm.md: a Chat Completions tool
message carries no ``name`` (OpenAI's tool messages have none) and an assistant message without
text has ``content: null``; a Responses user message is the short form (``content`` a string),
and a ``function_call`` item carries its ``call_id`` only (``id`` is the server's to give).
"""

from __future__ import annotations

import json
from typing import Any

from agentloom.inference.scripted import ScriptedModel
from agentloom.llm import LLM, FunctionTool, Message, MessageToolCall
from agentloom.testing.backend import FakeBackend
from tests.llm.conftest import MakeLLM

FOO = FunctionTool(
    "foo",
    "Do foo.",
    {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
)


def conversation(call_id: str) -> list[Message]:
    call = MessageToolCall(call_id, "foo", json.dumps({"x": 1}))
    return [
        Message.system("You are a helpful assistant."),
        Message.user("Please call foo with x=1."),
        Message.assistant(None, (call,)),
        Message.tool(call_id, "ok", "foo"),
    ]


async def test_the_chat_completions_sample(backend: FakeBackend, scripted: ScriptedModel) -> None:
    scripted.add_turn("Done.")

    async with LLM(backend.model, base_url=backend.base_url, max_retries=0) as llm:
        await llm.acompletion(conversation("call_abc123"), [FOO])

    assert backend.last_request["messages"] == [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Please call foo with x=1."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_abc123",
                    "type": "function",
                    "function": {"name": "foo", "arguments": '{"x": 1}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_abc123", "content": "ok"},
    ]


async def test_the_responses_sample(
    server_llm: MakeLLM, scripted: ScriptedModel, wire: list[dict[str, Any]]
) -> None:
    scripted.add_turn("Done.")

    await server_llm().aresponses(conversation("fc_call_abc123"), [FOO])

    assert wire[0]["instructions"] == "You are a helpful assistant."
    assert wire[0]["input"] == [
        {"role": "user", "content": "Please call foo with x=1."},
        {
            "type": "function_call",
            "call_id": "fc_call_abc123",
            "name": "foo",
            "arguments": '{"x": 1}',
        },
        {"type": "function_call_output", "call_id": "fc_call_abc123", "output": "ok"},
    ]
    assert scripted.requests[-1].messages[-1].tool_call_id == "fc_call_abc123"
