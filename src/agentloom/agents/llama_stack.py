"""Llama Stack client's agent names over agentloom: ``Agent`` (synchronous), ``AsyncAgent``,
``AgentEventLogger``.

```python
import openai
from agentloom.agents.llama_stack import Agent, AgentEventLogger

client = openai.OpenAI(base_url="http://127.0.0.1:8321/v1", api_key="unused")
agent = Agent(client, model="qwen3", instructions="You are a helpful assistant",
              tools=["builtin::code_interpreter"], input_shields=["llama_guard"])
session_id = agent.create_session("monitored_session")
for log in AgentEventLogger().log(agent.create_turn(messages=[...], session_id=session_id)):
    log.print()
response = agent.create_turn(messages=[...], session_id=session_id, stream=False)
print(response.output_message.content, response.steps)
```

:class:`Agent` runs :class:`~agentloom.agents.remote.Agent` (``AsyncAgent`` here) on an event
loop of its own, one per agent, kept between calls; it cannot be used from inside a running
event loop (use ``AsyncAgent`` there). Given an ``openai.OpenAI`` client, it talks to the same
server with an ``openai.AsyncOpenAI`` of the same base URL, key, headers, timeout and retries,
closed by :meth:`Agent.close`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Coroutine, Generator, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar, overload

import openai

from agentloom.agents.event_logger import EventLogger, LogLine
from agentloom.agents.remote import Agent as AsyncAgent
from agentloom.agents.remote import AgentTool, TurnInput
from agentloom.agents.sampling import SamplingParams
from agentloom.agents.session_documents import Document
from agentloom.agents.turns import TurnEvent, TurnResult

__all__ = ["Agent", "AgentEventLogger", "AsyncAgent"]

T = TypeVar("T")


class Agent:
    """The synchronous agent: :class:`AsyncAgent`'s options and methods, without ``await``."""

    def __init__(
        self,
        client: openai.OpenAI | openai.AsyncOpenAI | str,
        *,
        model: str,
        instructions: str | None = None,
        tools: Sequence[AgentTool] = (),
        api_key: str | None = None,
        max_rounds: int = 10,
        workspace: Path | None = None,
        input_shields: Sequence[str] = (),
        output_shields: Sequence[str] = (),
        sampling_params: SamplingParams | None = None,
        max_infer_iters: int | None = None,
        document_timeout: float = 120.0,
    ) -> None:
        target: openai.AsyncOpenAI | str
        self._made: openai.AsyncOpenAI | None = None
        if isinstance(client, openai.OpenAI):
            target = self._made = _async_client(client)
        else:
            target = client
        self.agent = AsyncAgent(
            target,
            model=model,
            instructions=instructions,
            tools=tools,
            api_key=api_key,
            max_rounds=max_rounds,
            workspace=workspace,
            input_shields=input_shields,
            output_shields=output_shields,
            sampling_params=sampling_params,
            max_infer_iters=max_infer_iters,
            document_timeout=document_timeout,
        )
        self._runner = asyncio.Runner()

    def create_session(self, session_name: str | None = None) -> str:
        return self._run(self.agent.create_session(session_name))

    def delete_session(self, session_id: str) -> None:
        self._run(self.agent.delete_session(session_id))

    @overload
    def create_turn(
        self,
        messages: TurnInput,
        session_id: str,
        *,
        documents: Sequence[Document] | None = None,
        stream: Literal[True] = True,
    ) -> Generator[TurnEvent, None, None]: ...

    @overload
    def create_turn(
        self,
        messages: TurnInput,
        session_id: str,
        *,
        documents: Sequence[Document] | None = None,
        stream: Literal[False],
    ) -> TurnResult: ...

    def create_turn(
        self,
        messages: TurnInput,
        session_id: str,
        *,
        documents: Sequence[Document] | None = None,
        stream: bool = True,
    ) -> Generator[TurnEvent, None, None] | TurnResult:
        """The turn's events as they happen (``stream=True``), or its result."""
        given = documents or ()
        if not stream:
            return self._run(self.agent.turn(messages, session_id, documents=given))
        return self._events(self.agent.stream_turn(messages, session_id, documents=given))

    def _events(self, events: AsyncGenerator[TurnEvent, None]) -> Generator[TurnEvent, None, None]:
        try:
            while True:
                try:
                    event = self._run(_next(events))
                except StopAsyncIteration:
                    return
                yield event
        finally:
            self._run(events.aclose())

    def _run(self, work: Coroutine[Any, Any, T]) -> T:
        try:
            return self._runner.run(work)
        except RuntimeError as error:
            if "running event loop" not in str(error):
                raise
            work.close()
            raise RuntimeError(
                "the synchronous Agent cannot run inside a running event loop: "
                "use agentloom.agents.llama_stack.AsyncAgent and await it"
            ) from None

    def close(self) -> None:
        """Close the client the agent made, and its event loop."""
        self._run(self.agent.aclose())
        if self._made is not None:
            self._run(self._made.close())
        self._runner.close()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


async def _next(events: AsyncGenerator[TurnEvent, None]) -> TurnEvent:
    return await anext(events)


def _async_client(client: openai.OpenAI) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=client.base_url,
        api_key=client.api_key,
        organization=client.organization,
        project=client.project,
        timeout=client.timeout,
        max_retries=client.max_retries,
        default_headers=client._custom_headers,  # the headers the client was given
    )


class AgentEventLogger:
    """Llama Stack's ``AgentEventLogger``: printable lines of a synchronous turn's events."""

    def log(self, events: Iterable[TurnEvent]) -> Iterator[LogLine]:
        return EventLogger().stream(events)
