"""The server ``Agent`` helper: sessions, a local tool and the event logger, Llama Stack style.

Runs anywhere, offline: a scripted model stands in for the LLM (served as an OpenAI-compatible
backend over HTTP), agentloom runs on a temporary SQLite file, and the agent talks to agentloom
over a real socket. The ``add`` tool runs here, in this process; the session (a server
conversation) keeps the history between turns.

    python examples/remote_agent.py
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from agentloom.agents.event_logger import EventLogger
from agentloom.agents.remote import Agent
from agentloom.agents.tools.base import function_tool
from agentloom.config import DatabaseSettings, ProviderSettings, Settings
from agentloom.inference.scripted import ScriptedModel, text, tool_call
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend, serve


@function_tool
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


async def converse(base_url: str) -> None:
    async with Agent(
        base_url, model="demo-model", instructions="You are a careful assistant.", tools=[add]
    ) as agent:
        session = await agent.create_session("arithmetic")
        for question in ("What is 19.5 + 22.5?", "And what did I just ask you?"):
            print(f"user> {question}")
            async for line in EventLogger().log(agent.create_turn(question, session)):
                line.print()
        result = await agent.turn("Thanks!", session)
        print(f"last turn: {result.status}, {len(result.response_ids)} response(s)")


def main() -> None:
    model = ScriptedModel(
        [
            [text("Let me add those."), tool_call("add", {"a": 19.5, "b": 22.5})],
            "19.5 + 22.5 = 42.",
            "You asked me to add 19.5 and 22.5.",
            "You're welcome.",
        ]
    )
    backend = FakeBackend(model, models=["demo-model"])
    with tempfile.TemporaryDirectory() as data, backend.serve() as backend_url:
        settings = Settings(
            database=DatabaseSettings(url=f"sqlite:///{Path(data) / 'agentloom.db'}"),
            providers=[ProviderSettings(name="demo", base_url=backend_url)],
        )
        with serve(create_app(settings)) as agentloom_url:
            asyncio.run(converse(agentloom_url))


if __name__ == "__main__":
    main()
