"""LangChain's default ``ChatOpenAI`` (Chat Completions) against agentloom over a real socket:
``invoke``, ``stream`` and tool calling, each passed through to the fake backend."""

from __future__ import annotations

from typing import Any

import langchain_openai

from agentloom.inference.scripted import ScriptedModel, text, tool_call
from agentloom.testing.backend import FakeBackend
from tests.clients.recording import Recorder


def chat_model(url: str, model: str, **options: Any) -> Any:
    return langchain_openai.ChatOpenAI(base_url=url, api_key="sk-test", model=model, **options)


def test_invoke_and_stream(
    agentloom_url: str, backend: FakeBackend, scripted: ScriptedModel, recorder: Recorder
) -> None:
    scripted.add_turn("Bonjour!")
    scripted.add_turn(text("Hello there, friend.", chunk_size=5))
    llm = chat_model(agentloom_url, backend.model)

    answer = llm.invoke("Say hello in French.")
    pieces = [chunk.content for chunk in llm.stream("Say hello.")]

    assert answer.content == "Bonjour!"
    assert answer.usage_metadata["output_tokens"] > 0
    assert "".join(pieces) == "Hello there, friend."
    assert len([p for p in pieces if p]) > 1  # it arrived in pieces
    assert len(recorder.posts("/chat/completions")) == 2
    assert recorder.failures() == []


def test_tool_calls(agentloom_url: str, backend: FakeBackend, scripted: ScriptedModel) -> None:
    scripted.add_turn(tool_call("get_weather", {"city": "Paris"}, call_id="call_7"))

    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"Sunny in {city}"

    llm = chat_model(agentloom_url, backend.model).bind_tools([get_weather])
    answer = llm.invoke("Weather in Paris?")

    assert answer.tool_calls == [
        {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_7", "type": "tool_call"}
    ]
    assert backend.requests[-1]["tools"][0]["function"]["name"] == "get_weather"
