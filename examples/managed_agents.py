"""Agents that live on the server (``/v1/managed-agents``): made once, then talked to from any
client: a streamed message whose tool runs on the server between model turns, messages queued
and run as a durable job followed as it goes, and a schedule that ticks by itself.

Runs anywhere, offline: a scripted model stands in for the LLM (served as an OpenAI-compatible
backend over HTTP), agentloom runs on a temporary SQLite file, and the SDK's ``ManagedAgents``
client talks to it over a real socket.

    python examples/managed_agents.py
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from agentloom.agents.remote import ManagedAgents
from agentloom.api.managed_agent_stream import AgentChunk, ToolCallsEvent, ToolResultEvent
from agentloom.config import DatabaseSettings, ManagedAgentSettings, ProviderSettings, Settings
from agentloom.inference.scripted import ScriptedModel, tool_call
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend, serve


async def talk(url: str) -> None:
    async with ManagedAgents(url) as agents:
        agent = await agents.create(
            "helper", agent_type="orchestrator", tools=["calculator"], instructions="Be brief."
        )
        print(f"agent {agent.id}: {agent.agent_type}, tools {agent.config.tools}")

        print("streamed: ", end="")
        async for event in agents.stream(agent.id, "What is 17 * 23?"):
            if isinstance(event, ToolCallsEvent):
                call = event.tool_calls[0].function
                print(f"[{call.name}({call.arguments})] ", end="")
            elif isinstance(event, ToolResultEvent):
                print(f"[-> {event.result}] ", end="")
            elif isinstance(event, AgentChunk) and event.choices[0].delta.content:
                print(event.choices[0].delta.content, end="")
        print()

        await agents.send(agent.id, "Buy milk.")
        await agents.send(agent.id, "Buy bread.")
        run = await agents.run(agent.id)
        followed = [e async for e in agents.follow(agent.id, run.id)]
        texts = [e.choices[0].delta.content for e in followed if isinstance(e, AgentChunk)]
        print(f"run {run.status} -> {(await agents.get_run(agent.id, run.id)).status}: ", end="")
        print("".join(t for t in texts if t))

        every = {"type": "interval", "every": 1}
        watcher = await agents.create(
            "watcher", agent_type="orchestrator", schedule=every, task="Check the queue."
        )
        # the server's state is polled over HTTP: no local event can say when it changes
        while not (ticks := await agents.runs(watcher.id)) or ticks[0].status != "completed":  # noqa: ASYNC110
            await asyncio.sleep(0.1)
        print(f"scheduled tick: {ticks[0].trigger} run {ticks[0].status}")
        await agents.delete(watcher.id)

        history = await agents.messages(agent.id)
        print(f"conversation: {[(m.direction, m.content) for m in history]}")


def main() -> None:
    model = ScriptedModel(
        [
            [tool_call("calculator", {"expression": "17 * 23"})],
            "17 * 23 = 391.",
            "Noted: milk and bread.",
            "Queue checked: all quiet.",
        ]
    )
    backend = FakeBackend(model, models=["demo-model"])
    with tempfile.TemporaryDirectory() as data, backend.serve() as backend_url:
        settings = Settings(
            database=DatabaseSettings(url=f"sqlite:///{Path(data) / 'agentloom.db'}"),
            providers=[ProviderSettings(name="demo", base_url=backend_url)],
            managed_agents=ManagedAgentSettings(directory=Path(data) / "agents"),
        )
        with serve(create_app(settings)) as url:
            asyncio.run(talk(url))


if __name__ == "__main__":
    main()
