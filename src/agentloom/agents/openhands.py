"""``openhands``: a task run by an OpenHands agent (the OpenHands Software Agent SDK).

The SDK is an optional extra (``pip install 'agentloom-server[openhands]'``: ``openhands-sdk``
and ``openhands-tools``, which need Python 3.12 or later), imported only when a run starts;
without it, making the agent is an ``InvalidRequestError`` saying what to install.

A run builds OpenHands' default agent (terminal, file editor, task tracker) on this agent's
model, reached over HTTP as an OpenAI-compatible endpoint (LiteLLM's ``openai/<model>`` with
the LLM's base URL and key), and runs a conversation in the workspace (the run's context's, else
the agent's, else the current directory). OpenHands' loop is synchronous: it runs in a worker
thread, and its events come back as they happen (an action is a ``ToolStarted``, its observation
a ``ToolFinished``, an agent message ``TextDelta``). Closing the stream early pauses the
conversation and waits for its current step.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentloom.agents.base import (
    AgentContext,
    AgentEvent,
    AgentFinished,
    AgentInput,
    AgentResult,
    AgentUsage,
    BaseAgent,
    StopReason,
    TextDelta,
    ToolFinished,
    ToolOutcome,
    ToolStarted,
    TurnStarted,
    memory_section,
)
from agentloom.errors import AgentloomError, InvalidRequestError, UpstreamError
from agentloom.frozen import frozen
from agentloom.json_types import JSONValue
from agentloom.llm.client import LLM
from agentloom.llm.types import MessageToolCall

__all__ = ["INSTALL", "OpenHandsAgent", "openhands_available", "require_openhands"]

INSTALL = "pip install 'agentloom-server[openhands]'"
_MODULES = ("openhands.sdk", "openhands.sdk.conversation", "openhands.tools.preset.default")


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def openhands_available() -> bool:
    return all(_importable(name) for name in _MODULES)


def require_openhands() -> None:
    if not openhands_available():
        raise InvalidRequestError(
            "the openhands agent needs the OpenHands SDK (openhands-sdk and openhands-tools, "
            f"Python 3.12 or later), which is not installed: {INSTALL}"
        )


@frozen
class _Sdk:
    """The parts of the SDK a run uses (its types are the SDK's, unknown here)."""

    llm: Any
    conversation: Any
    default_agent: Any
    final_response: Any
    content_to_str: Any
    action_event: Any
    message_event: Any
    observation_base: Any
    observation_event: Any

    @classmethod
    def load(cls) -> _Sdk:
        sdk = importlib.import_module("openhands.sdk")
        conversation = importlib.import_module("openhands.sdk.conversation")
        event = importlib.import_module("openhands.sdk.event")
        llm = importlib.import_module("openhands.sdk.llm")
        preset = importlib.import_module("openhands.tools.preset.default")
        return cls(
            llm=sdk.LLM,
            conversation=sdk.Conversation,
            default_agent=preset.get_default_agent,
            final_response=conversation.get_agent_final_response,
            content_to_str=llm.content_to_str,
            action_event=event.ActionEvent,
            message_event=event.MessageEvent,
            observation_base=event.ObservationBaseEvent,
            observation_event=event.ObservationEvent,
        )

    def text(self, content: Any) -> str:
        return "".join(str(part) for part in self.content_to_str(content))


class _Bridge:
    """Events from the worker thread to the stream, in order; ``None`` ends them."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._queue: asyncio.Queue[AgentEvent | None] = asyncio.Queue()
        self.conversation: Any = None

    def put(self, event: AgentEvent | None) -> None:
        self._loop.call_soon_threadsafe(self._queue.put_nowait, event)

    async def next(self) -> AgentEvent | None:
        return await self._queue.get()

    def pause(self) -> None:
        if self.conversation is not None:
            self.conversation.pause()


@dataclass
class _Translator:
    """OpenHands' events as ours (called in the worker thread, for each event)."""

    sdk: _Sdk
    bridge: _Bridge
    turns: int = 0
    responses: set[str] = field(default_factory=set)
    calls: dict[str, MessageToolCall] = field(default_factory=dict)
    outcomes: list[ToolOutcome] = field(default_factory=list)

    def __call__(self, event: Any) -> None:
        for ours in self._translate(event):
            self.bridge.put(ours)

    def _translate(self, event: Any) -> list[AgentEvent]:
        if isinstance(event, self.sdk.action_event) and event.source == "agent":
            return [*self._turn(str(event.llm_response_id)), *self._action(event)]
        if isinstance(event, self.sdk.observation_base):
            return [self._observation(event)]
        if isinstance(event, self.sdk.message_event) and event.source == "agent":
            text = self.sdk.text(event.llm_message.content)
            return [*self._turn(None), TextDelta(text)] if text else self._turn(None)
        return []

    def _turn(self, response_id: str | None) -> list[AgentEvent]:
        if response_id is not None and response_id in self.responses:
            return []
        if response_id is not None:
            self.responses.add(response_id)
        self.turns += 1
        return [TurnStarted(self.turns)]

    def _action(self, event: Any) -> list[AgentEvent]:
        thought = self.sdk.text(event.thought)
        call = MessageToolCall(
            str(event.tool_call_id), str(event.tool_name), str(event.tool_call.arguments)
        )
        self.calls[call.call_id] = call
        return [*([TextDelta(thought)] if thought else []), ToolStarted(call)]

    def _observation(self, event: Any) -> AgentEvent:
        call_id, name = str(event.tool_call_id), str(event.tool_name)
        call = self.calls.get(call_id, MessageToolCall(call_id, name))
        output = self.sdk.text(event.to_llm_message().content)
        failed = not isinstance(event, self.sdk.observation_event)  # an error or a rejection
        outcome = ToolOutcome(call_id, call.name, call.arguments, output, failed)
        self.outcomes.append(outcome)
        return ToolFinished(outcome)

    def result(self, conversation: Any) -> AgentResult:
        status = str(conversation.state.execution_status.value)
        metadata: dict[str, JSONValue] = {"runtime": "openhands", "status": status}
        return AgentResult(
            content=str(self.sdk.final_response(conversation.state.events)),
            tool_results=tuple(self.outcomes),
            turns=self.turns,
            usage=_usage(conversation, self.turns),
            stop_reason=_stop_reason(status),
            metadata=metadata,
        )


def _usage(conversation: Any, turns: int) -> AgentUsage:
    tokens = conversation.conversation_stats.get_combined_metrics().accumulated_token_usage
    if tokens is None:
        return AgentUsage(model_calls=turns)
    return AgentUsage(
        input_tokens=int(tokens.prompt_tokens),
        output_tokens=int(tokens.completion_tokens),
        cached_tokens=int(tokens.cache_read_tokens),
        model_calls=turns,
    )


def _stop_reason(status: str) -> StopReason:
    if status == "finished":
        return "final"
    return "error" if status in ("error", "stuck") else "max_turns"


class OpenHandsAgent(BaseAgent):
    """Runs the task with OpenHands' default agent (see the module doc). ``max_turns``: the
    conversation's iterations per run."""

    name = "openhands"
    description = "OpenHands (its Software Agent SDK): terminal, file editor, task tracker."

    def __init__(
        self,
        llm: LLM,
        *,
        instructions: str | None = None,
        max_turns: int = 100,
        workspace: Path | None = None,
    ) -> None:
        super().__init__(llm, instructions=instructions)
        require_openhands()
        if llm.base_url is None:
            raise InvalidRequestError(
                "the openhands agent calls its model over HTTP: give it an LLM with a base_url "
                "(an OpenAI-compatible endpoint)"
            )
        self.max_turns = max_turns
        self.workspace = workspace

    async def stream(
        self, input: AgentInput, context: AgentContext | None = None
    ) -> AsyncGenerator[AgentEvent, None]:
        context = context or AgentContext()
        cwd = context.workspace or self.workspace or Path.cwd()
        bridge = _Bridge(asyncio.get_running_loop())
        worker = asyncio.ensure_future(
            asyncio.to_thread(self._converse, bridge, self._prompt(input, context), cwd)
        )
        try:
            while (event := await bridge.next()) is not None:
                yield event
            result = await worker
        finally:
            if not worker.done():
                bridge.pause()
                await asyncio.wait([worker])  # its outcome is no one's now
                if not worker.cancelled():
                    worker.exception()
        yield AgentFinished(result)

    def _converse(self, bridge: _Bridge, prompt: str, cwd: Path) -> AgentResult:
        """The whole conversation, in the worker thread; its events go through ``bridge``."""
        try:
            sdk = _Sdk.load()
            translator = _Translator(sdk, bridge)
            conversation = self._conversation(sdk, translator, cwd)
            bridge.conversation = conversation
            conversation.send_message(prompt)
            conversation.run()
            return translator.result(conversation)
        except AgentloomError:
            raise
        except Exception as exc:  # the vendor's errors, as ours (the SDK raises its own kinds)
            raise UpstreamError(f"OpenHands failed: {type(exc).__name__}: {exc}") from exc
        finally:
            bridge.put(None)

    def _conversation(self, sdk: _Sdk, translator: _Translator, cwd: Path) -> Any:
        key = {"api_key": self.llm.api_key} if self.llm.api_key else {}
        model = sdk.llm(model=f"openai/{self.llm.model}", base_url=self.llm.base_url, **key)
        return sdk.conversation(
            agent=sdk.default_agent(llm=model, cli_mode=True),
            workspace=str(cwd),
            callbacks=[translator],
            max_iteration_per_run=self.max_turns,
            visualizer=None,  # nothing printed: the events are ours to report
        )

    def _prompt(self, input: AgentInput, context: AgentContext) -> str:
        if isinstance(input, str):
            task = input
        else:
            task = "\n\n".join(f"{m.role}: {m.content}" for m in input if m.content)
        memory = memory_section(context.memory_results)
        return "\n\n".join(part for part in (self.instructions, memory, task) if part)
