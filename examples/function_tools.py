"""A function-tool round trip through agentloom with the official ``openai`` client.

Runs anywhere, offline: a scripted model stands in for the LLM (served as an OpenAI-compatible
backend over HTTP), agentloom runs on a temporary SQLite file, and the client talks to agentloom
over a real socket. Swap the scripted backend for your vLLM / Ollama URL to use a real model.

    python examples/function_tools.py
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from openai import OpenAI

from agentloom.config import DatabaseSettings, ProviderSettings, Settings
from agentloom.inference.scripted import ScriptedModel, text, tool_call
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend, serve

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
    "strict": True,
}


def get_weather(city: str) -> str:
    return json.dumps({"city": city, "sky": "sunny", "celsius": 21})


def main() -> None:
    model = ScriptedModel(
        [
            [tool_call("get_weather", {"city": "Paris"})],
            [text("It is sunny in Paris, 21 °C.")],
        ]
    )
    backend = FakeBackend(model, models=["demo-model"])
    with tempfile.TemporaryDirectory() as data, backend.serve() as backend_url:
        settings = Settings(
            database=DatabaseSettings(url=f"sqlite:///{Path(data) / 'agentloom.db'}"),
            providers=[ProviderSettings(name="demo", base_url=backend_url)],
        )
        with serve(create_app(settings)) as agentloom_url:
            client = OpenAI(base_url=agentloom_url, api_key="unused")
            first = client.responses.create(
                model="demo-model", input="What's the weather in Paris?", tools=[WEATHER]
            )
            call = next(item for item in first.output if item.type == "function_call")
            print(f"model called {call.name}({call.arguments})")
            result = get_weather(**json.loads(call.arguments))
            second = client.responses.create(
                model="demo-model",
                previous_response_id=first.id,
                input=[{"type": "function_call_output", "call_id": call.call_id, "output": result}],
                tools=[WEATHER],
            )
            print(f"answer: {second.output_text}")
            stored = client.responses.retrieve(second.id)
            print(f"stored: {stored.id} ({stored.status})")


if __name__ == "__main__":
    main()
