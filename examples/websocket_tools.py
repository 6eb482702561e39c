"""A function-tool round trip over one WebSocket (``client.responses.connect()``), unstored.

Like ``function_tools.py``, offline: a scripted model stands in for the LLM. Both responses run
on one connection with ``store: false``: the second continues the first through the connection,
which keeps the chain of its latest response, so nothing is written to the database.

    python examples/websocket_tools.py
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from openai import OpenAI
from openai.resources.responses.responses import ResponsesConnection
from openai.types.responses import FunctionToolParam, Response
from openai.types.responses.responses_client_event_param import ResponseCreate

from agentloom.config import DatabaseSettings, ProviderSettings, Settings
from agentloom.inference.scripted import ScriptedModel, text, tool_call
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend, serve

WEATHER: FunctionToolParam = {
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


def run_turn(connection: ResponsesConnection, create: ResponseCreate) -> Response:
    """Send one ``response.create`` and read its events up to the terminal one."""
    connection.send(create)
    for event in connection:
        if event.type == "error":
            raise RuntimeError(f"refused: {event.error.message}")
        if event.type in ("response.completed", "response.incomplete", "response.failed"):
            return event.response
    raise RuntimeError("the connection closed before the response ended")


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
            with client.responses.connect() as connection:
                first = run_turn(
                    connection,
                    {
                        "type": "response.create",
                        "model": "demo-model",
                        "input": "What's the weather in Paris?",
                        "tools": [WEATHER],
                        "store": False,
                    },
                )
                call = next(item for item in first.output if item.type == "function_call")
                print(f"model called {call.name}({call.arguments})")
                output = get_weather(**json.loads(call.arguments))
                second = run_turn(
                    connection,
                    {
                        "type": "response.create",
                        "model": "demo-model",
                        "previous_response_id": first.id,  # continued on this connection
                        "input": [
                            {
                                "type": "function_call_output",
                                "call_id": call.call_id,
                                "output": output,
                            }
                        ],
                        "tools": [WEATHER],
                        "store": False,
                    },
                )
            print(f"answer: {second.output_text} ({second.status}, not stored)")


if __name__ == "__main__":
    main()
