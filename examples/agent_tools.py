"""An agent with tools, in-process and offline: the orchestrator strategy with the calculator.

A scripted model stands in for the LLM (it asks for two calculations at once, then answers);
swap ``provider=...`` for ``base_url="http://localhost:8000/v1"`` to use a real model.

    python examples/agent_tools.py
"""

from __future__ import annotations

import asyncio

from agentloom.agents import (
    AgentFinished,
    OrchestratorAgent,
    ToolFinished,
    ToolStarted,
    function_tool,
)
from agentloom.agents.tools.calculator import CalculatorTool
from agentloom.inference.scripted import ScriptedModel, tool_call
from agentloom.llm import LLM


@function_tool
def unit_price(item: str) -> float:
    """The price of one unit of an item, in euros."""
    return {"apple": 0.4, "pear": 0.55}[item]


async def main() -> None:
    model = ScriptedModel(
        [
            [  # turn 1: two tool calls, run concurrently
                tool_call("unit_price", {"item": "pear"}, "call_price"),
                tool_call("calculator", {"expression": "12 * 0.55 + 7 * 0.4"}, "call_total"),
            ],
            "12 pears and 7 apples cost 9.40 euros.",  # turn 2: the answer
        ]
    )
    llm = LLM("scripted", provider=model)
    agent = OrchestratorAgent(
        llm, [CalculatorTool(), unit_price], instructions="Use the calculator for arithmetic."
    )

    # agent.run(question) returns the AgentResult; stream() shows each step on the way
    async for event in agent.stream("What do 12 pears and 7 apples cost?"):
        if isinstance(event, ToolStarted):
            print(f"tool: {event.call.name}({event.call.arguments})")
        elif isinstance(event, ToolFinished):
            print(f"  -> {event.outcome.output}")
        elif isinstance(event, AgentFinished):
            result = event.result
            print(f"answer: {result.content}")
            print(f"turns: {result.turns}, model calls: {result.usage.model_calls}")
    await agent.aclose()


if __name__ == "__main__":
    asyncio.run(main())
