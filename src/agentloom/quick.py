"""One-liners: ask an agent a question and get its answer.

```python
import agentloom

agentloom.ask("What is 17 * 23?", tools=["calculator"], model="qwen3")   # -> "391"
result = agentloom.ask_full("...", agent="react", tools=["calculator"])  # -> AgentResult
answer = await agentloom.ask_async("...")                              # inside an event loop
```

The model, base URL and API key are resolved as for the CLI
(:mod:`agentloom.agents.connection`): arguments, then ``AGENTLOOM_*`` / ``OPENAI_*`` variables,
then the ``config`` file, then a local agentloom server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path as FilePath
from typing import TypedDict, Unpack

from agentloom.agents.base import AgentContext, AgentResult
from agentloom.agents.builders import AgentOptions
from agentloom.agents.connection import open_agent, resolve_connection
from agentloom.agents.tools.base import Tool
from agentloom.llm.types import Path

__all__ = ["AskOptions", "ask", "ask_async", "ask_full", "ask_full_async"]


async def ask_full_async(
    question: str,
    *,
    agent: str = "orchestrator",
    tools: Sequence[str | Tool] = (),
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    path: Path | None = None,
    instructions: str | None = None,
    max_turns: int = 10,
    config: str | FilePath | None = None,
) -> AgentResult:
    """Run ``agent`` with ``tools`` (tool names or :class:`Tool` instances) on ``question``."""
    connection = resolve_connection(
        model=model, base_url=base_url, api_key=api_key, path=path, config=config
    )
    options = AgentOptions(instructions=instructions, max_turns=max_turns)
    async with open_agent(connection, agent, tools, options) as built:
        return await built.run(question, AgentContext())


class AskOptions(TypedDict, total=False):
    """The keyword arguments of :func:`ask_full_async`, shared by the other three."""

    agent: str
    tools: Sequence[str | Tool]
    model: str | None
    base_url: str | None
    api_key: str | None
    path: Path | None
    instructions: str | None
    max_turns: int
    config: str | FilePath | None


async def ask_async(question: str, **options: Unpack[AskOptions]) -> str:
    """The answer of :func:`ask_full_async`."""
    result = await ask_full_async(question, **options)
    return result.content


def ask_full(question: str, **options: Unpack[AskOptions]) -> AgentResult:
    """:func:`ask_full_async`, from synchronous code (not inside a running event loop)."""
    _outside_a_loop("ask_full", "ask_full_async")
    return asyncio.run(ask_full_async(question, **options))


def ask(question: str, **options: Unpack[AskOptions]) -> str:
    """Ask an agent (default: the orchestrator) ``question``; its answer. The options are
    those of :func:`ask_full_async`."""
    _outside_a_loop("ask", "ask_async")
    return asyncio.run(ask_async(question, **options))


def _outside_a_loop(name: str, instead: str) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError(
        f"agentloom.{name}() cannot run inside a running event loop; "
        f"use `await agentloom.{instead}(...)` there"
    )
