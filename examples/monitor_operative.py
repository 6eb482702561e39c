"""A long-horizon monitor: the monitor operative with its default strategies, two ticks apart.

Runs anywhere, offline: a scripted model stands in for the LLM (its turns below include the
strategies' own calls: the plan, the summary of a long log, the causal links, the relevance
judgement) and the session lives in a temporary SQLite file. Each tick builds a fresh agent on
the same data directory, so what the second tick knows came through the session store. Swap
``provider=...`` for ``base_url="http://localhost:8000/v1"`` to use a real model.

    python examples/monitor_operative.py
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from agentloom.agents.monitor import MonitorOperativeAgent
from agentloom.agents.sessions import SessionStore
from agentloom.agents.tools.base import function_tool
from agentloom.inference.scripted import ScriptedModel, Turn, tool_call
from agentloom.llm import LLM

TASK = "Watch the shop's checkout errors and find their cause."
PLAN = [
    {"title": "Collect the errors", "done_when": "the error log is read"},
    {"title": "Find the cause of the failed writes", "done_when": "a cause is named"},
]
LINKS = [
    {"cause": "nightly backup", "effect": "disk full", "confidence": 0.8},
    {"cause": "disk full", "effect": "failed checkout writes", "confidence": 0.9},
]


@function_tool
def read_log() -> str:
    """Read the shop's error log."""
    return "02:00 backup started\n" + "02:13 ERROR write failed: no space left on /var\n" * 80


async def tick(data_dir: Path, turns: list[Turn], message: str | None = None) -> ScriptedModel:
    """One tick of session "checkout" by a brand-new monitor over ``data_dir``."""
    model = ScriptedModel(turns)
    store = SessionStore.in_dir(data_dir)
    agent = MonitorOperativeAgent(
        LLM("scripted", provider=model), [read_log], store=store, task=TASK, session_id="checkout"
    )
    try:
        result = await agent.tick(message)
    finally:
        await agent.aclose()
        await store.aclose()
    calls, recalled = result.usage.model_calls, result.metadata["recalled"]
    print(f"tick {result.metadata['tick']}: {result.content}")
    print(f"  model calls: {calls}, memories recalled: {recalled}")
    return model


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        data_dir = Path(folder)

        # tick 1: plan, read the (long, so summarised) log, finish a phase, extract the causes
        await tick(
            data_dir,
            [
                json.dumps(PLAN),
                [tool_call("read_log")],
                "The 02:00 backup filled /var; from 02:13 every write fails.",
                [tool_call("finish_phase", {"summary": "Errors collected."})],
                "Checkout writes fail since 02:13: /var is full.",
                json.dumps(LINKS),
            ],
        )

        # tick 2: a new agent; the relevance judge keeps one of the two recalled links
        model = await tick(
            data_dir,
            ["[2]", "The nightly backup fills /var and the writes fail.", "[]"],
            "Why do the checkout writes fail? Look at the backup too.",
        )
        system = str(model.requests[1].messages[0].content)
        print(system[system.index("Your plan") :])

        store = SessionStore.in_dir(data_dir)
        try:
            saved = await store.load("monitor_operative", "checkout")
        finally:
            await store.aclose()
        print("saved keys:", ", ".join(sorted(saved.state)))


if __name__ == "__main__":
    asyncio.run(main())
