"""LangChain's ``ChatOpenAI`` on the Responses API, served by agentloom over a real socket."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from agentloom.inference.scripted import ScriptedModel, text, tool_call
from agentloom.testing.backend import FakeBackend
from tests.e2e.support import last_received


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}"


@pytest.fixture
def chat(live_url: str, backend: FakeBackend) -> ChatOpenAI:
    return ChatOpenAI(
        model=backend.model,
        base_url=live_url,
        api_key="x",
        use_responses_api=True,
        max_retries=0,
        timeout=10.0,
    )


async def test_ainvoke(scripted: ScriptedModel, backend: FakeBackend, chat: ChatOpenAI) -> None:
    scripted.add_turn("Bonjour!")

    reply = await chat.ainvoke("Say hello in French")

    assert isinstance(reply, AIMessage)
    assert reply.text == "Bonjour!"
    assert reply.response_metadata["status"] == "completed"
    assert str(reply.response_metadata["id"]).startswith("resp_")
    assert last_received(backend)["messages"][-1] == {
        "role": "user",
        "content": "Say hello in French",
    }


async def test_astream(scripted: ScriptedModel, chat: ChatOpenAI) -> None:
    scripted.add_turn(text("one two three", chunk_size=4))

    chunks = [chunk async for chunk in chat.astream("Count")]

    assert all(isinstance(chunk, AIMessageChunk) for chunk in chunks)
    pieces = [chunk.text for chunk in chunks if chunk.text]
    assert pieces == ["one ", "two ", "thre", "e"]


async def test_bind_tools_returns_tool_calls(
    scripted: ScriptedModel, backend: FakeBackend, chat: ChatOpenAI
) -> None:
    scripted.add_turn(tool_call("get_weather", {"city": "Paris"}, "call_lc1"))

    reply = await chat.bind_tools([get_weather]).ainvoke("Weather in Paris?")

    assert isinstance(reply, AIMessage)
    assert reply.tool_calls == [
        {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_lc1", "type": "tool_call"}
    ]
    sent = last_received(backend)["tools"]
    assert [t["function"]["name"] for t in sent] == ["get_weather"]
    assert sent[0]["function"]["parameters"]["properties"] == {"city": {"type": "string"}}


async def test_tool_result_goes_back_to_the_model(
    scripted: ScriptedModel, backend: FakeBackend, chat: ChatOpenAI
) -> None:
    scripted.add_turn(tool_call("get_weather", {"city": "Paris"}, "call_lc2"))
    scripted.add_turn("It is sunny in Paris.")
    model = chat.bind_tools([get_weather])
    messages: list[BaseMessage] = [HumanMessage("Weather in Paris?")]

    asked = await model.ainvoke(messages)
    assert isinstance(asked, AIMessage)
    messages.append(asked)
    for call in asked.tool_calls:
        messages.append(await get_weather.ainvoke(call))
    answer = await model.ainvoke(messages)

    assert answer.text == "It is sunny in Paris."
    sent = last_received(backend)["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[1]["tool_calls"][0]["id"] == "call_lc2"
    assert json.loads(sent[1]["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}
    assert sent[2] == {"role": "tool", "tool_call_id": "call_lc2", "content": "Sunny in Paris"}
