"""An agent over a server's Responses API, for users coming from Llama Stack's agent client.

```python
agent = Agent("http://127.0.0.1:8321/v1", model="qwen3", instructions="Be brief.",
              tools=[calculator, {"type": "web_search"}])
session = await agent.create_session("demo")          # a server conversation
async for event in agent.create_turn("What is 6*7?", session):
    ...                                               # typed TurnEvents
result = await agent.turn("And doubled?", session)    # the same turn, collected
```

The session is a server conversation (``POST /v1/conversations``), so the server keeps the
history. Hosted tools (``{"type": "web_search"}`` ...) run on the server; :class:`Tool` instances
run here, their outputs sent back as ``function_call_output`` until the model is done. A tool
given only as a :class:`FunctionTool` is declared to the model and answered by the caller: the
turn ends ``requires_action`` with the call in ``pending_calls``.

Agents that live on the server itself (``/v1/managed-agents``: kept history and state, runs as
durable jobs, schedules) are :class:`ManagedAgents`' (:mod:`agentloom.agents.managed_client`).
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Coroutine, Iterable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias, overload

import openai
from openai.types.responses import (
    EasyInputMessageParam,
    FunctionToolParam,
    Response,
    ResponseCompletedEvent,
    ResponseErrorEvent,
    ResponseFailedEvent,
    ResponseIncompleteEvent,
    ResponseInputItemParam,
    ResponseOutputItem,
    ResponseOutputItemDoneEvent,
    ResponseStreamEvent,
    ResponseTextDeltaEvent,
    ToolParam,
)

from agentloom.agents.base import AgentContext, AgentUsage, ToolOutcome
from agentloom.agents.executor import ToolExecutor
from agentloom.agents.managed_client import ManagedAgents
from agentloom.agents.tools.base import Tool
from agentloom.agents.turns import (
    HostedToolCall,
    InferenceStarted,
    LocalToolFinished,
    LocalToolStarted,
    ToolOutput,
    TurnCompleted,
    TurnEvent,
    TurnResult,
    TurnStatus,
    TurnTextDelta,
)
from agentloom.errors import UpstreamError
from agentloom.llm.responses_request import input_content
from agentloom.llm.strict_schema import strict_schema
from agentloom.llm.types import FunctionTool, Message, MessageToolCall

__all__ = ["Agent", "AgentTool", "ManagedAgents", "TurnInput", "TurnMessage"]

AgentTool: TypeAlias = Tool | FunctionTool | ToolParam
TurnMessage: TypeAlias = Message | EasyInputMessageParam | ToolOutput
TurnInput: TypeAlias = str | Sequence[TurnMessage]

_NOT_TOOL_CALLS = frozenset({"message", "reasoning", "function_call", "compaction"})


class Agent:
    """A model, instructions and tools, run turn by turn on a server's sessions.

    ``client`` is an ``openai.AsyncOpenAI`` (left open: it is the caller's) or a base URL (the
    agent makes a client and closes it in :meth:`aclose`). ``max_rounds`` caps the Responses
    calls of one turn. Local tools run with an :class:`AgentContext` carrying the session id
    and ``workspace``.
    """

    def __init__(
        self,
        client: openai.AsyncOpenAI | str,
        *,
        model: str,
        instructions: str | None = None,
        tools: Sequence[AgentTool] = (),
        api_key: str | None = None,
        max_rounds: int = 10,
        workspace: Path | None = None,
    ) -> None:
        if max_rounds < 1:
            raise ValueError("max_rounds must be at least 1")
        self.model = model
        self.instructions = instructions
        self.max_rounds = max_rounds
        self.workspace = workspace
        self._own_client = isinstance(client, str)
        self._client = _client(client, api_key)
        local = [tool for tool in tools if isinstance(tool, Tool)]
        self._executor = ToolExecutor(local)
        self._declared = frozenset(t.name for t in tools if isinstance(t, FunctionTool))
        self._tools = [_tool_param(tool) for tool in tools]

    @property
    def client(self) -> openai.AsyncOpenAI:
        return self._client

    async def create_session(self, name: str | None = None) -> str:
        """A new session (a server conversation); its id is what turns run on."""
        metadata = {"name": name} if name else openai.omit
        conversation = await self._client.conversations.create(metadata=metadata)
        return conversation.id

    async def delete_session(self, session_id: str) -> None:
        await self._client.conversations.delete(session_id)

    # --- turns -------------------------------------------------------------------------------

    @overload
    def create_turn(
        self, messages: TurnInput, session_id: str, *, stream: Literal[True] = True
    ) -> AsyncGenerator[TurnEvent, None]: ...

    @overload
    def create_turn(
        self, messages: TurnInput, session_id: str, *, stream: Literal[False]
    ) -> Coroutine[Any, Any, TurnResult]: ...

    def create_turn(
        self, messages: TurnInput, session_id: str, *, stream: bool = True
    ) -> AsyncGenerator[TurnEvent, None] | Coroutine[Any, Any, TurnResult]:
        """Llama Stack's spelling: :meth:`stream_turn` (``stream=True``) or :meth:`turn`."""
        return self.stream_turn(messages, session_id) if stream else self.turn(messages, session_id)

    async def turn(self, messages: TurnInput, session_id: str) -> TurnResult:
        """Run a turn to its end: :meth:`stream_turn`, collected."""
        async with aclosing(self.stream_turn(messages, session_id)) as events:
            async for event in events:
                if isinstance(event, TurnCompleted):
                    return event.result
        raise RuntimeError("the turn ended without a result")

    async def stream_turn(
        self, messages: TurnInput, session_id: str
    ) -> AsyncGenerator[TurnEvent, None]:
        """Run a turn, yielding its steps; the last event is :class:`TurnCompleted`."""
        items = input_items(messages)
        turn = _Turn(session_id)
        for number in range(1, self.max_rounds + 1):
            yield InferenceStarted(number)
            round_ = _Round()
            async with aclosing(self._respond(items, session_id, round_)) as events:
                async for event in events:
                    yield event
            response = round_.finished()
            turn.add(response)
            calls = function_calls(response.output)
            if not calls or response.status != "completed":
                done: TurnStatus = "completed" if response.status == "completed" else "incomplete"
                yield TurnCompleted(turn.result(done))
                return
            outputs: list[ToolOutcome] = []
            async with aclosing(self._run_local(calls, session_id, outputs)) as events:
                async for event in events:
                    yield event
            turn.outcomes.extend(outputs)
            items = [_output_item(outcome) for outcome in outputs]
            pending = tuple(call for call in calls if call.name in self._declared)
            if pending or number == self.max_rounds:
                await self._record(session_id, items)
                status: TurnStatus = "requires_action" if pending else "max_rounds"
                yield TurnCompleted(turn.result(status, pending))
                return

    async def _respond(
        self, items: list[ResponseInputItemParam], session_id: str, round_: _Round
    ) -> AsyncGenerator[TurnEvent, None]:
        stream = await self._client.responses.create(
            model=self.model,
            input=items,
            conversation=session_id,
            instructions=self.instructions if self.instructions is not None else openai.omit,
            tools=self._tools or openai.omit,
            stream=True,
        )
        async with stream:
            async for event in stream:
                translated = round_.see(event)
                if translated is not None:
                    yield translated

    async def _run_local(
        self, calls: Sequence[MessageToolCall], session_id: str, outcomes: list[ToolOutcome]
    ) -> AsyncGenerator[TurnEvent, None]:
        local = [call for call in calls if call.name not in self._declared]
        if not local:
            return
        for call in local:
            yield LocalToolStarted(call)
        context = AgentContext(session_id=session_id, workspace=self.workspace)
        for outcome in await self._executor.run(local, context):
            outcomes.append(outcome)
            yield LocalToolFinished(outcome)

    async def _record(self, session_id: str, items: list[ResponseInputItemParam]) -> None:
        """Add tool outputs to the session without asking the model (the turn stops here)."""
        if items:
            await self._client.conversations.items.create(session_id, items=items)

    # --- lifetime ----------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the client if the agent made it (local tools are the caller's to close)."""
        if self._own_client:
            await self._client.close()

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


# --- one Responses call, and the turn it belongs to ------------------------------------------


@dataclass
class _Round:
    """What one streamed Responses call produced."""

    response: Response | None = None

    def see(self, event: ResponseStreamEvent) -> TurnEvent | None:
        if isinstance(event, ResponseTextDeltaEvent):
            return TurnTextDelta(event.delta)
        if isinstance(event, ResponseOutputItemDoneEvent):
            return HostedToolCall(event.item) if event.item.type not in _NOT_TOOL_CALLS else None
        if isinstance(event, ResponseCompletedEvent | ResponseIncompleteEvent):
            self.response = event.response
        elif isinstance(event, ResponseFailedEvent):
            raise _failure(event.response)
        elif isinstance(event, ResponseErrorEvent):
            raise UpstreamError(event.message, code=event.code)
        return None

    def finished(self) -> Response:
        if self.response is None:
            raise UpstreamError("the response stream ended before the response did")
        return self.response


@dataclass
class _Turn:
    session_id: str
    responses: list[Response] = field(default_factory=list)
    outcomes: list[ToolOutcome] = field(default_factory=list)
    usage: AgentUsage = field(default_factory=AgentUsage)

    def add(self, response: Response) -> None:
        self.responses.append(response)
        self.usage = self.usage.merge(_usage(response))

    def result(self, status: TurnStatus, pending: tuple[MessageToolCall, ...] = ()) -> TurnResult:
        last = self.responses[-1]
        return TurnResult(
            session_id=self.session_id,
            output_text=last.output_text,
            status=status,
            response=last,
            response_ids=tuple(response.id for response in self.responses),
            tool_results=tuple(self.outcomes),
            hosted_calls=tuple(
                item
                for response in self.responses
                for item in response.output
                if item.type not in _NOT_TOOL_CALLS
            ),
            pending_calls=pending,
            usage=self.usage,
        )


def _failure(response: Response) -> UpstreamError:
    error = response.error
    if error is None:
        return UpstreamError(f"response {response.id} failed")
    return UpstreamError(error.message, code=error.code)


def _usage(response: Response) -> AgentUsage:
    usage = response.usage
    if usage is None:
        return AgentUsage(model_calls=1)
    return AgentUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_tokens=usage.input_tokens_details.cached_tokens,
        reasoning_tokens=usage.output_tokens_details.reasoning_tokens,
        model_calls=1,
    )


# --- wire conversions ------------------------------------------------------------------------


def function_calls(output: Iterable[ResponseOutputItem]) -> tuple[MessageToolCall, ...]:
    """The function calls among a response's output items."""
    return tuple(
        MessageToolCall(item.call_id, item.name, item.arguments)
        for item in output
        if item.type == "function_call"
    )


def input_items(messages: TurnInput) -> list[ResponseInputItemParam]:
    """A turn's messages as Responses input items."""
    if isinstance(messages, str):
        return [{"type": "message", "role": "user", "content": messages}]
    return [item for message in messages for item in _items(message)]


def _items(message: TurnMessage) -> list[ResponseInputItemParam]:
    if isinstance(message, ToolOutput):
        return [_call_output(message.call_id, message.output)]
    if not isinstance(message, Message):
        return [message]
    if message.role == "tool":
        if message.tool_call_id is None:
            raise ValueError("a tool message needs the tool_call_id it answers")
        return [_call_output(message.tool_call_id, message.text)]
    items: list[ResponseInputItemParam] = []
    if message.content or not message.tool_calls:
        content = input_content(message) if message.role == "user" else message.text
        items.append({"type": "message", "role": message.role, "content": content})
    items.extend(
        {"type": "function_call", "call_id": c.call_id, "name": c.name, "arguments": c.arguments}
        for c in message.tool_calls
    )
    return items


def _output_item(outcome: ToolOutcome) -> ResponseInputItemParam:
    return _call_output(outcome.call_id, outcome.output)


def _call_output(call_id: str, output: str) -> ResponseInputItemParam:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def _tool_param(tool: AgentTool) -> ToolParam:
    if isinstance(tool, Tool):
        return _function_param(tool.spec())
    if isinstance(tool, FunctionTool):
        return _function_param(tool)
    return tool


def _function_param(spec: FunctionTool) -> FunctionToolParam:
    """The tool as sent: strict only when it asks to be (the agent reads the calls' arguments
    itself, as the model wrote them)."""
    strict = spec.strict is True
    parameters = strict_schema(spec.parameters, tool=spec.name) if strict else spec.parameters
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": dict(parameters),
        "strict": strict,
    }


def _client(client: openai.AsyncOpenAI | str, api_key: str | None) -> openai.AsyncOpenAI:
    if isinstance(client, openai.AsyncOpenAI):
        return client
    key = api_key or os.environ.get("AGENTLOOM_API_KEY") or os.environ.get("OPENAI_API_KEY")
    return openai.AsyncOpenAI(base_url=client, api_key=key or "unused")
