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

Llama Stack's agent options work as its documentation shows: ``documents=`` on a turn (put in
the session's vector store and searched with ``file_search``, :mod:`.session_documents`),
``input_shields`` / ``output_shields`` (:mod:`.turn_shields`), ``sampling_params``
(:mod:`.sampling`), ``max_infer_iters``, and the tool ids ``builtin::rag/knowledge_search`` and
``builtin::code_interpreter`` (:mod:`.toolgroups`). A turn's result carries Llama Stack's
``input_messages``, ``steps`` and ``output_message`` (:mod:`.turn_steps`).

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
    FileSearchToolParam,
    FunctionToolParam,
    Response,
    ResponseCompletedEvent,
    ResponseErrorEvent,
    ResponseFailedEvent,
    ResponseIncludable,
    ResponseIncompleteEvent,
    ResponseInputItemParam,
    ResponseOutputItem,
    ResponseOutputItemDoneEvent,
    ResponseStreamEvent,
    ResponseTextDeltaEvent,
    ToolParam,
)
from typing_extensions import TypeIs

from agentloom.agents.base import AgentContext, AgentUsage, ToolOutcome
from agentloom.agents.executor import ToolExecutor
from agentloom.agents.managed_client import ManagedAgents
from agentloom.agents.sampling import Sampling, SamplingParams, sampling
from agentloom.agents.session_documents import AttachedDocuments, Document, SessionDocuments
from agentloom.agents.toolgroups import BuiltinTools, ToolgroupSpec, builtin_tools
from agentloom.agents.tools.base import Tool
from agentloom.agents.turn_shields import TurnShields
from agentloom.agents.turn_steps import (
    CompletionMessage,
    InferenceStep,
    SafetyViolation,
    ShieldCallStep,
    TurnStep,
    refusal_of,
    response_steps,
    tool_execution,
)
from agentloom.agents.turns import (
    HostedToolCall,
    InferenceStarted,
    LocalToolFinished,
    LocalToolStarted,
    ShieldCalled,
    ToolOutput,
    TurnCompleted,
    TurnEvent,
    TurnResult,
    TurnStatus,
    TurnTextDelta,
)
from agentloom.errors import UpstreamError
from agentloom.ids import new_id
from agentloom.llm.responses_request import input_content
from agentloom.llm.strict_schema import strict_schema
from agentloom.llm.types import FunctionTool, Message, MessageToolCall

__all__ = ["Agent", "AgentTool", "Document", "ManagedAgents", "TurnInput", "TurnMessage"]

AgentTool: TypeAlias = Tool | FunctionTool | ToolParam | ToolgroupSpec
TurnMessage: TypeAlias = Message | EasyInputMessageParam | ToolOutput
TurnInput: TypeAlias = str | Sequence[TurnMessage]

CODE_FILES = "/mnt/data"  # where code_interpreter's container holds its files
_NOT_TOOL_CALLS = frozenset({"message", "reasoning", "function_call", "compaction"})


class Agent:
    """A model, instructions and tools, run turn by turn on a server's sessions.

    ``client`` is an ``openai.AsyncOpenAI`` (left open: it is the caller's) or a base URL (the
    agent makes a client and closes it in :meth:`aclose`). ``max_rounds`` caps the Responses
    calls of one turn; Llama Stack's ``max_infer_iters`` sets it and also caps the model calls
    the server makes in each. Local tools run with an :class:`AgentContext` carrying the
    session id and ``workspace``. ``document_timeout`` bounds fetching and ingesting a turn's
    documents. A bad option is a ``ValueError`` naming it, raised here.
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
        input_shields: Sequence[str] = (),
        output_shields: Sequence[str] = (),
        sampling_params: SamplingParams | None = None,
        max_infer_iters: int | None = None,
        document_timeout: float = 120.0,
    ) -> None:
        if max_infer_iters is not None and max_infer_iters < 1:
            raise ValueError("max_infer_iters must be at least 1")
        if max_rounds < 1:
            raise ValueError("max_rounds must be at least 1")
        self.model = model
        self.instructions = instructions
        self.max_rounds = max_infer_iters or max_rounds
        self.max_infer_iters = max_infer_iters
        self.workspace = workspace
        self.sampling: Sampling = sampling(sampling_params)
        self._own_client = isinstance(client, str)
        self._client = _client(client, api_key)
        self._executor = ToolExecutor([tool for tool in tools if isinstance(tool, Tool)])
        self._declared = frozenset(t.name for t in tools if isinstance(t, FunctionTool))
        self._builtin: BuiltinTools = builtin_tools([t for t in tools if _is_toolgroup(t)])
        self._tools = [_tool_param(t) for t in tools if not _is_toolgroup(t)]
        self._tools.extend(self._builtin.params())
        self.shields = TurnShields(self._client, input_shields, output_shields)
        self._documents = SessionDocuments(self._client, document_timeout)
        self._knowledge: tuple[str, ...] | None = None

    @property
    def client(self) -> openai.AsyncOpenAI:
        return self._client

    async def create_session(self, name: str | None = None) -> str:
        """A new session (a server conversation); its id is what turns run on."""
        metadata = {"name": name} if name else openai.omit
        conversation = await self._client.conversations.create(metadata=metadata)
        return conversation.id

    async def delete_session(self, session_id: str) -> None:
        """Delete the session (its vector store, if documents made one, stays)."""
        await self._client.conversations.delete(session_id)
        self._documents.forget(session_id)

    async def session_vector_store(self, session_id: str) -> str | None:
        """The id of the vector store holding the session's documents (``None``: none yet)."""
        return await self._documents.store(session_id)

    # --- turns -------------------------------------------------------------------------------

    @overload
    def create_turn(
        self,
        messages: TurnInput,
        session_id: str,
        *,
        documents: Sequence[Document] = (),
        stream: Literal[True] = True,
    ) -> AsyncGenerator[TurnEvent, None]: ...

    @overload
    def create_turn(
        self,
        messages: TurnInput,
        session_id: str,
        *,
        documents: Sequence[Document] = (),
        stream: Literal[False],
    ) -> Coroutine[Any, Any, TurnResult]: ...

    def create_turn(
        self,
        messages: TurnInput,
        session_id: str,
        *,
        documents: Sequence[Document] = (),
        stream: bool = True,
    ) -> AsyncGenerator[TurnEvent, None] | Coroutine[Any, Any, TurnResult]:
        """Llama Stack's spelling: :meth:`stream_turn` (``stream=True``) or :meth:`turn`."""
        if stream:
            return self.stream_turn(messages, session_id, documents=documents)
        return self.turn(messages, session_id, documents=documents)

    async def turn(
        self, messages: TurnInput, session_id: str, *, documents: Sequence[Document] = ()
    ) -> TurnResult:
        """Run a turn to its end: :meth:`stream_turn`, collected."""
        async with aclosing(self.stream_turn(messages, session_id, documents=documents)) as events:
            async for event in events:
                if isinstance(event, TurnCompleted):
                    return event.result
        raise RuntimeError("the turn ended without a result")

    async def stream_turn(
        self, messages: TurnInput, session_id: str, *, documents: Sequence[Document] = ()
    ) -> AsyncGenerator[TurnEvent, None]:
        """Run a turn, yielding its steps; the last event is :class:`TurnCompleted`.

        ``documents`` go into the session's vector store once the input shields passed, and
        the turn searches it."""
        items = input_items(messages)
        turn = _Turn(session_id, new_id("turn"), turn_messages(messages))
        if self.shields.input:
            violation = await self.shields.check_input(turn.input_messages)
            yield ShieldCalled(turn.shield_step("input", self.shields.input, violation))
            if violation is not None:
                yield TurnCompleted(turn.blocked(violation))
                return
        attached = await self._documents.attach(session_id, documents) if documents else None
        tools = await self._turn_tools(session_id, attached)
        if attached is not None and self._builtin.code_interpreter:
            items.append(_code_files_note(attached))
        async with aclosing(self._rounds(turn, items, tools)) as events:
            async for event in events:
                yield event
        if self.shields.output:
            yield ShieldCalled(turn.output_checked(self.shields.output))
        yield TurnCompleted(turn.result())

    async def _rounds(
        self, turn: _Turn, items: list[ResponseInputItemParam], tools: list[ToolParam]
    ) -> AsyncGenerator[TurnEvent, None]:
        """The turn's Responses calls, and the local tools run between them."""
        for number in range(1, self.max_rounds + 1):
            yield InferenceStarted(number)
            round_ = _Round()
            async with aclosing(self._respond(items, turn.session_id, tools, round_)) as events:
                async for event in events:
                    yield event
            response = round_.finished()
            turn.add(response)
            calls = function_calls(response.output)
            if not calls or response.status != "completed":
                turn.status = "completed" if response.status == "completed" else "incomplete"
                return
            outputs: list[ToolOutcome] = []
            async with aclosing(self._run_local(calls, turn.session_id, outputs)) as events:
                async for event in events:
                    yield event
            turn.ran(calls, outputs, self._declared)
            items = [_output_item(outcome) for outcome in outputs]
            turn.pending = tuple(call for call in calls if call.name in self._declared)
            if turn.pending or number == self.max_rounds:
                await self._record(turn.session_id, items)
                turn.status = "requires_action" if turn.pending else "max_rounds"
                return

    async def _respond(
        self,
        items: list[ResponseInputItemParam],
        session_id: str,
        tools: list[ToolParam],
        round_: _Round,
    ) -> AsyncGenerator[TurnEvent, None]:
        stream = await self._client.responses.create(
            model=self.model,
            input=items,
            conversation=session_id,
            instructions=self.instructions if self.instructions is not None else openai.omit,
            tools=tools or openai.omit,
            include=_includes(tools) or openai.omit,
            temperature=_given(self.sampling.temperature),
            top_p=_given(self.sampling.top_p),
            max_output_tokens=_given(self.sampling.max_output_tokens),
            extra_body=self._extensions() or None,
            stream=True,
        )
        async with stream:
            async for event in stream:
                translated = round_.see(event)
                if translated is not None:
                    yield translated

    def _extensions(self) -> dict[str, object]:
        """Llama Stack's request fields the server takes: the output guardrails, the cap."""
        body: dict[str, object] = {}
        if self.shields.output:
            body["guardrails"] = list(self.shields.output)
        if self.max_infer_iters is not None:
            body["max_infer_iters"] = self.max_infer_iters
        return body

    async def _turn_tools(
        self, session_id: str, attached: AttachedDocuments | None
    ) -> list[ToolParam]:
        """The turn's tools: the agent's, file_search over its knowledge and the session's
        documents, code_interpreter with the turn's documents copied in."""
        tools = list(self._tools)
        stores = list(await self._knowledge_stores())
        if attached is not None or self._builtin.knowledge_search:
            session_store = await self._documents.store(session_id)
            stores.extend([session_store] if session_store else [])
        if stores:
            tools = _with_file_search(tools, stores, self._builtin.max_chunks)
        if self._builtin.code_interpreter:
            files = list(attached.file_ids) if attached else []
            tools.append(
                {"type": "code_interpreter", "container": {"type": "auto", "file_ids": files}}
            )
        return tools

    async def _knowledge_stores(self) -> tuple[str, ...]:
        """``vector_db_ids`` as vector store ids (a name is looked up once)."""
        if self._knowledge is None:
            self._knowledge = tuple([await self._store_id(s) for s in self._builtin.vector_stores])
        return self._knowledge

    async def _store_id(self, id_or_name: str) -> str:
        try:
            return (await self._client.vector_stores.retrieve(id_or_name)).id
        except openai.NotFoundError:
            pass
        named = [s.id async for s in self._client.vector_stores.list() if s.name == id_or_name]
        if len(named) != 1:
            found = "no" if not named else f"{len(named)}"
            raise ValueError(
                f"vector_db_ids: {found} vector store has the id or name {id_or_name!r}"
            )
        return named[0]

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
    turn_id: str
    input_messages: tuple[Message, ...]
    responses: list[Response] = field(default_factory=list)
    outcomes: list[ToolOutcome] = field(default_factory=list)
    steps: list[TurnStep] = field(default_factory=list)
    usage: AgentUsage = field(default_factory=AgentUsage)
    status: TurnStatus = "completed"
    pending: tuple[MessageToolCall, ...] = ()
    refusal: str | None = None

    def add(self, response: Response) -> None:
        self.responses.append(response)
        self.usage = self.usage.merge(_usage(response))
        self.steps.extend(response_steps(response, self.turn_id, len(self.steps) + 1))
        self.refusal = self.refusal or refusal_of(response)

    def ran(
        self,
        calls: Sequence[MessageToolCall],
        outcomes: list[ToolOutcome],
        declared: frozenset[str],
    ) -> None:
        self.outcomes.extend(outcomes)
        local = [call for call in calls if call.name not in declared]
        if local:
            self.steps.append(tool_execution(self.turn_id, len(self.steps) + 1, local, outcomes))

    def shield_step(
        self,
        direction: Literal["input", "output"],
        shields: tuple[str, ...],
        found: SafetyViolation | None,
    ) -> ShieldCallStep:
        step = ShieldCallStep(
            f"{self.turn_id}-step-{len(self.steps) + 1}", self.turn_id, direction, shields, found
        )
        self.steps.append(step)
        return step

    def output_checked(self, shields: tuple[str, ...]) -> ShieldCallStep:
        """The output shields' step: the server refused (a refusal in a response) or not."""
        if self.refusal is None:
            return self.shield_step("output", shields, None)
        self.status = "blocked"
        metadata: dict[str, str | bool | list[str]] = {"shield_ids": list(shields)}
        return self.shield_step("output", shields, SafetyViolation("error", self.refusal, metadata))

    def blocked(self, violation: SafetyViolation) -> TurnResult:
        """The result of a turn an input shield stopped before the model was called."""
        message = violation.user_message or ""
        return TurnResult(
            session_id=self.session_id,
            output_text=message,
            status="blocked",
            response=None,
            response_ids=(),
            turn_id=self.turn_id,
            input_messages=self.input_messages,
            steps=tuple(self.steps),
            output_message=CompletionMessage(message, "end_of_turn"),
        )

    def result(self) -> TurnResult:
        last = self.responses[-1]
        return TurnResult(
            session_id=self.session_id,
            output_text=self.refusal
            if self.status == "blocked" and self.refusal
            else last.output_text,
            status=self.status,
            response=last,
            response_ids=tuple(response.id for response in self.responses),
            tool_results=tuple(self.outcomes),
            hosted_calls=tuple(
                item
                for response in self.responses
                for item in response.output
                if item.type not in _NOT_TOOL_CALLS
            ),
            pending_calls=self.pending,
            usage=self.usage,
            turn_id=self.turn_id,
            input_messages=self.input_messages,
            steps=tuple(self.steps),
            output_message=self._output_message(),
        )

    def _output_message(self) -> CompletionMessage:
        answers = [step for step in self.steps if isinstance(step, InferenceStep)]
        return answers[-1].model_response if answers else CompletionMessage("", "end_of_turn")


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


def _tool_param(tool: Tool | FunctionTool | ToolParam) -> ToolParam:
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


def _is_toolgroup(tool: AgentTool) -> TypeIs[ToolgroupSpec]:
    """A Llama Stack tool id: ``"builtin::..."`` or ``{"name": ..., "args": ...}`` (no type)."""
    return isinstance(tool, str) or (isinstance(tool, dict) and "type" not in tool)


def _code_files_note(attached: AttachedDocuments) -> ResponseInputItemParam:
    """Tell the model where code_interpreter finds the turn's documents (as Llama Stack did)."""
    paths = ", ".join(f"{CODE_FILES}/{name}" for name in attached.filenames)
    text = f"The documents of this message are files for code_interpreter: {paths}"
    return {"type": "message", "role": "user", "content": text}


def _given(value: float | int | None) -> Any:
    return openai.omit if value is None else value


def _includes(tools: Sequence[ToolParam]) -> list[ResponseIncludable]:
    """What hosted calls should carry back: search results and code output, for the steps."""
    types = {tool["type"] for tool in tools}
    wanted: dict[str, ResponseIncludable] = {
        "file_search": "file_search_call.results",
        "code_interpreter": "code_interpreter_call.outputs",
    }
    return [include for kind, include in wanted.items() if kind in types]


def _with_file_search(
    tools: list[ToolParam], stores: Sequence[str], max_chunks: int | None
) -> list[ToolParam]:
    """``tools`` searching ``stores`` too: added to the agent's own file_search, or a new one."""
    for index, tool in enumerate(tools):
        if tool["type"] == "file_search":
            merged: FileSearchToolParam = {
                **tool,
                "vector_store_ids": list(dict.fromkeys([*tool["vector_store_ids"], *stores])),
            }
            return [*tools[:index], merged, *tools[index + 1 :]]
    search: FileSearchToolParam = {
        "type": "file_search",
        "vector_store_ids": list(dict.fromkeys(stores)),
    }
    if max_chunks is not None:
        search["max_num_results"] = max_chunks
    return [*tools, search]


def turn_messages(messages: TurnInput) -> tuple[Message, ...]:
    """A turn's messages as :class:`Message` s (Llama Stack's ``input_messages``)."""
    if isinstance(messages, str):
        return (Message.user(messages),)
    return tuple(_message(message) for message in messages)


def _message(message: TurnMessage) -> Message:
    if isinstance(message, Message):
        return message
    if isinstance(message, ToolOutput):
        return Message.tool(message.call_id, message.output)
    content = message["content"]
    if not isinstance(content, str):
        content = "".join(str(part.get("text", "")) for part in content)
    return Message(message["role"], content)
