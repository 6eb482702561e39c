"""What agentloom sends parses into the ``openai`` package's types under strict validation:
every required field present, never null where they say a value."""

from __future__ import annotations

import json
from typing import Any

import httpx2
from openai.types.conversations import Conversation, ConversationItem, ConversationItemList
from openai.types.conversations.conversation_deleted_resource import ConversationDeletedResource
from openai.types.responses import (
    InputTokenCountResponse,
    Response,
    ResponseCompactionItem,
    ResponseItem,
    ResponseStreamEvent,
)
from pydantic import TypeAdapter

from agentloom.inference.scripted import ScriptedModel, reasoning, text, tool_call
from agentloom.testing.backend import FakeBackend

EVENTS: TypeAdapter[ResponseStreamEvent] = TypeAdapter(ResponseStreamEvent)
ITEM: TypeAdapter[ConversationItem] = TypeAdapter(ConversationItem)
INPUT_ITEM: TypeAdapter[ResponseItem] = TypeAdapter(ResponseItem)
TOOLS: list[dict[str, Any]] = [{"type": "function", "name": "get_weather"}]


async def test_responses_and_their_events(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(reasoning("thinking"), text("hello"), tool_call("get_weather", {"c": 1}))
    body = {"model": backend.model, "input": "hi", "tools": TOOLS, "stream": True}

    reply = await http.post("/responses", json=body)

    frames = [line[6:] for line in reply.text.splitlines() if line.startswith("data: {")]
    for frame in frames:
        EVENTS.validate_json(frame)
    final = json.loads(frames[-1])["response"]
    Response.model_validate(final)
    stored = (await http.get(f"/responses/{final['id']}")).json()
    Response.model_validate(stored)
    for item in (await http.get(f"/responses/{final['id']}/input_items")).json()["data"]:
        INPUT_ITEM.validate_python(item)


async def test_conversations_and_their_items(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    created = (await http.post("/conversations", json={"metadata": {"k": "v"}})).json()
    Conversation.model_validate(created)
    path = f"/conversations/{created['id']}"
    items = [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "x"},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "s"}]},
        {"role": "assistant", "content": "done"},
    ]
    ConversationItemList.model_validate(
        (await http.post(f"{path}/items", json={"items": items})).json()
    )
    scripted.add_turn("answer")
    await http.post(
        "/responses", json={"model": backend.model, "conversation": created["id"], "input": "q"}
    )

    listed = (await http.get(f"{path}/items")).json()
    for item in listed["data"]:
        ITEM.validate_python(item)
    ConversationDeletedResource.model_validate((await http.delete(path)).json())


async def test_compaction_and_token_counts(
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    scripted.add_turn("a summary")
    compacted = (
        await http.post("/responses/compact", json={"model": backend.model, "input": "long story"})
    ).json()
    ResponseCompactionItem.model_validate(compacted["output"][-1])
    counted = (
        await http.post("/responses/input_tokens", json={"model": backend.model, "input": "x"})
    ).json()
    InputTokenCountResponse.model_validate(counted)
