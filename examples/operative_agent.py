"""A scheduled, persistent agent: the operative, two ticks apart, remembering between them.

Runs anywhere, offline: a scripted model stands in for the LLM and the session lives in a
temporary SQLite file. Each tick builds a fresh operative on the same data directory, as two
runs of a cron job (or two processes) would: what the first tick saved is all the second one
knows. Swap ``provider=...`` for ``base_url="http://localhost:8000/v1"`` to use a real model.

    python examples/operative_agent.py
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from agentloom.agents.operative import OperativeAgent
from agentloom.agents.sessions import SessionStore
from agentloom.inference.scripted import ScriptedModel, Turn, tool_call
from agentloom.llm import LLM

TASK = "Watch the build queue and tell me when it grows."


async def tick(data_dir: Path, turns: list[Turn], message: str | None = None) -> ScriptedModel:
    """One tick of session "builds" by a brand-new operative over ``data_dir``."""
    model = ScriptedModel(turns)
    store = SessionStore.in_dir(data_dir)  # <data_dir>/agents.db, opened on first use
    agent = OperativeAgent(
        LLM("scripted", provider=model), store=store, task=TASK, session_id="builds"
    )
    try:
        result = await agent.tick(message)
    finally:
        await agent.aclose()
        await store.aclose()
    record = agent.last_tick
    assert record is not None
    print(f"tick {record.number} ({record.status}): {result.content}")
    return model


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        data_dir = Path(folder)

        # tick 1: the model saves what it saw with the operative's `remember` tool
        await tick(
            data_dir,
            [
                [tool_call("remember", {"key": "queue_length", "value": 3})],
                "The queue holds 3 builds; I will compare next time.",
            ],
        )

        # tick 2: a new agent, the same session: its prompt carries the history and the state
        model = await tick(
            data_dir, ["The queue grew from 3 to 5 builds."], "The queue now holds 5 builds."
        )
        prompt = model.requests[0].messages
        print(f"tick 2 saw {len(prompt) - 2} earlier message(s) and this system prompt state:")
        system = str(prompt[0].content)
        print(system[system.index("Your saved state") :].split("\n\n")[0])

        store = SessionStore.in_dir(data_dir)
        try:
            saved = await store.load("operative", "builds")
        finally:
            await store.aclose()
        print("remembered:", json.dumps(saved.state, sort_keys=True))


if __name__ == "__main__":
    asyncio.run(main())
