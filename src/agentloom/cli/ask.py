"""``agentloom ask``: one question to an agent, its answer on stdout (``--json``: the whole
result)."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import TYPE_CHECKING

import click

from agentloom.cli.options import AgentChoice, agent_options, clean_errors

if TYPE_CHECKING:
    from agentloom.agents.base import AgentResult
    from agentloom.json_types import JSONObject

__all__ = ["ask", "result_json"]


@click.command()
@agent_options
@click.option("--json", "as_json", is_flag=True, help="Print the whole result as JSON.")
@click.argument("question")
def ask(question: str, as_json: bool, choice: AgentChoice) -> None:
    """Ask an agent QUESTION and print its answer ("-" reads the question from stdin)."""
    if question == "-":
        question = sys.stdin.read()
    with clean_errors():
        result = asyncio.run(_ask(choice, question))
    if as_json:
        click.echo(json.dumps(result_json(result), ensure_ascii=False, indent=2))
    else:
        click.echo(result.content)


async def _ask(choice: AgentChoice, question: str) -> AgentResult:
    from agentloom.agents.base import AgentContext
    from agentloom.agents.connection import open_agent

    connection = choice.connection()
    async with open_agent(connection, choice.agent, choice.tools, choice.options()) as agent:
        return await agent.run(question, AgentContext())


def result_json(result: AgentResult) -> JSONObject:
    """The result without its messages (they may hold encrypted reasoning)."""
    usage = result.usage
    return {
        "content": result.content,
        "tool_results": [
            {
                "call_id": outcome.call_id,
                "name": outcome.name,
                "arguments": outcome.arguments,
                "output": outcome.output,
                "is_error": outcome.is_error,
            }
            for outcome in result.tool_results
        ],
        "turns": result.turns,
        "usage": {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "total_tokens": usage.total_tokens,
            "cached_tokens": usage.cached_tokens,
            "reasoning_tokens": usage.reasoning_tokens,
            "model_calls": usage.model_calls,
        },
        "stop_reason": result.stop_reason,
        "max_turns_exceeded": result.max_turns_exceeded,
        "metadata": result.metadata,
    }
