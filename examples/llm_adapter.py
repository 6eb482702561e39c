"""The SDK's LLM adapter on both wire paths: Chat Completions and the Responses API.

Runs anywhere, offline: a scripted model stands in for the LLM (served as an OpenAI-compatible
backend over HTTP) and agentloom serves the Responses API in front of it, on a temporary SQLite
file. The same ``LLM.chat`` call talks to the backend directly (Chat Completions) and to
agentloom (Responses, stateful: only new messages and ``previous_response_id`` are sent). Every
call is reported on the event bus. Point ``base_url`` at vLLM, Ollama or OpenAI to use a real one.

    python examples/llm_adapter.py
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from agentloom.bus import EventBus
from agentloom.config import DatabaseSettings, ProviderSettings, Settings
from agentloom.inference.scripted import ScriptedModel, reasoning, text, tool_call
from agentloom.llm import LLM, ConversationState, FunctionTool, LLMCall, Message
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend, serve

WEATHER = FunctionTool(
    "get_weather",
    "Current weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    strict=True,
)


def get_weather(city: str) -> str:
    return json.dumps({"city": city, "sky": "sunny", "celsius": 21})


def report(call: LLMCall) -> None:
    tokens = call.metrics.total_tokens if call.metrics else 0
    print(f"  [bus] {call.path} {call.model}: {call.error or 'ok'}, {tokens} tokens")


async def chat_completions(backend_url: str, bus: EventBus) -> None:
    async with LLM("demo-model", base_url=backend_url, bus=bus) as llm:
        reply = await llm.chat([Message.system("Be brief."), Message.user("Say hello.")])
        print(f"{llm.path}: {reply.text}")


async def responses(agentloom_url: str, bus: EventBus) -> None:
    state = ConversationState()
    async with LLM(
        "demo-model", base_url=agentloom_url, path="responses", state_mode="stateful", bus=bus
    ) as llm:
        history = [Message.system("Be brief."), Message.user("What's the weather in Paris?")]
        first = await llm.chat(history, [WEATHER], state=state)
        (call,) = first.tool_calls
        print(f"{llm.path}: the model thought {first.reasoning!r}, called {call.name}")
        output = get_weather(str(call.parsed_arguments()["city"]))
        history += [first.message, Message.tool(call.call_id, output)]
        # stateful: this call sends only the tool output, after previous_response_id=first's id
        second = await llm.chat(history, [WEATHER], state=state)
        print(f"{llm.path}: {second.text}")
        print(f"state: {state.sent} messages held by the server, up to {second.response_id}")


def main() -> None:
    model = ScriptedModel(
        [
            [text("Hello!")],
            [reasoning("I should look it up."), tool_call("get_weather", {"city": "Paris"})],
            [text("It is sunny in Paris, 21 °C.")],
        ]
    )
    backend = FakeBackend(model, models=["demo-model"])
    bus = EventBus()
    bus.subscribe(report, LLMCall)
    with tempfile.TemporaryDirectory() as data, backend.serve() as backend_url:
        settings = Settings(
            database=DatabaseSettings(url=f"sqlite:///{Path(data) / 'agentloom.db'}"),
            providers=[ProviderSettings(name="demo", base_url=backend_url)],
        )
        asyncio.run(chat_completions(backend_url, bus))
        with serve(create_app(settings)) as agentloom_url:
            asyncio.run(responses(agentloom_url, bus))


if __name__ == "__main__":
    main()
