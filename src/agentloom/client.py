"""A client object for asking agents questions from synchronous code, in the shape of
OpenJarvis's ``Jarvis``: the connection resolved once, then any number of questions.

```python
from agentloom import Client

with Client(model="qwen3") as client:                      # or Client(); client.close()
    client.ask("Hello", agent="simple")                     # -> "Hi! ..."
    result = client.ask_full("What is sqrt(144)?", agent="orchestrator", tools=["calculator"])
    result["content"], result["turns"], result["tool_results"]   # or result.content, ...
```

The model, base URL and API key are resolved as for :func:`agentloom.ask` (arguments, then
``AGENTLOOM_*`` / ``OPENAI_*`` variables, then the ``config`` file, then a local agentloom
server). Every question runs on the client's own event loop (so it cannot be used inside a
running one: use :func:`agentloom.ask_async` there), within ``timeout`` seconds. ``Jarvis`` is
the same class under the seed's name.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path as FilePath
from types import TracebackType

from agentloom.agents.base import AgentContext, AgentResult, MemoryResult
from agentloom.agents.builders import AgentOptions
from agentloom.agents.connection import Connection, open_agent, resolve_connection
from agentloom.agents.tools.base import Tool
from agentloom.llm.types import Path

__all__ = ["Client", "Jarvis"]

DEFAULT_TIMEOUT = 600.0


class Client:
    """Asks agents questions over one connection; see the module doc."""

    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        path: Path | None = None,
        config: str | FilePath | None = None,
        agent: str = "orchestrator",
        max_turns: int = 10,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be a positive number of seconds")
        self.connection: Connection = resolve_connection(
            model=model, base_url=base_url, api_key=api_key, path=path, config=config
        )
        self.agent = agent
        self.max_turns = max_turns
        self.timeout = timeout
        self._runner: asyncio.Runner | None = asyncio.Runner()

    def ask(
        self,
        question: str,
        *,
        agent: str | None = None,
        tools: Sequence[str | Tool] = (),
        instructions: str | None = None,
        memory: Sequence[MemoryResult | str] = (),
    ) -> str:
        """The agent's answer to ``question`` (default agent: the client's)."""
        return self.ask_full(
            question, agent=agent, tools=tools, instructions=instructions, memory=memory
        ).content

    def ask_full(
        self,
        question: str,
        *,
        agent: str | None = None,
        tools: Sequence[str | Tool] = (),
        instructions: str | None = None,
        memory: Sequence[MemoryResult | str] = (),
    ) -> AgentResult:
        """The whole result: ``content``, ``turns``, ``tool_results``, usage and metadata
        (readable as ``result["content"]`` too). ``memory``: shown to the model with the
        system prompt (:attr:`AgentContext.memory_results`)."""
        runner = self._open_runner()
        options = AgentOptions(instructions=instructions, max_turns=self.max_turns)
        context = AgentContext(memory_results=tuple(memory))
        run = self._run(question, agent or self.agent, tools, options, context)
        return runner.run(run)

    async def _run(
        self,
        question: str,
        agent: str,
        tools: Sequence[str | Tool],
        options: AgentOptions,
        context: AgentContext,
    ) -> AgentResult:
        async with asyncio.timeout(self.timeout):
            async with open_agent(self.connection, agent, tools, options) as built:
                return await built.run(question, context)

    def _open_runner(self) -> asyncio.Runner:
        if self._runner is None:
            raise RuntimeError("this client is closed")
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self._runner
        raise RuntimeError(
            "a Client cannot ask inside a running event loop; use "
            "`await agentloom.ask_async(...)` there"
        )

    def close(self) -> None:
        """Close the client's event loop; it cannot ask afterwards. Closing twice is allowed."""
        runner, self._runner = self._runner, None
        if runner is not None:
            runner.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


Jarvis = Client
