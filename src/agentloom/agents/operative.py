"""The operative: a scheduled, persistent agent.

Each tick (one :meth:`OperativeAgent.tick`, or one ``run``/``stream``) resumes a session kept in
a :class:`~agentloom.agents.sessions.SessionStore`:

1. load the session's history and saved state (a JSON object);
2. run the function-calling loop (:class:`~agentloom.agents.orchestrator.OrchestratorAgent`)
   over a fresh system prompt (the instructions, the task and the saved state), the history,
   and the tick's message (``Tick <n> (<UTC time>): <input or task>``);
3. save the new history, bounded to ``max_history`` messages without splitting a tool-call
   group, and record the tick (``ok``, ``incomplete`` when it stopped without a final answer,
   or ``error``).

State is saved explicitly by the ``remember(key, value)`` tool the operative offers (written at
once, merged atomically with other writers; ``null`` forgets a key) and, with ``auto_save``
(the default), automatically: the final answer goes under ``"last_result"``. A failed tick saves
no history (its state writes stay) and is recorded as ``error``. :meth:`run_every` runs ticks on
a schedule: start to start every ``interval_s`` seconds, never overlapping (a long tick delays
the next), a failing tick recorded and logged while the schedule goes on.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import replace
from datetime import UTC, datetime
from typing import Final

from agentloom.agents.base import (
    AgentContext,
    AgentEvent,
    AgentFinished,
    AgentInput,
    AgentResult,
    BaseAgent,
)
from agentloom.agents.orchestrator import OrchestratorAgent
from agentloom.agents.saved_history import trim_history
from agentloom.agents.sessions import SavedSession, SessionStore, TickRecord, TickStatus
from agentloom.agents.tools.base import Tool, ToolError
from agentloom.frozen import frozen
from agentloom.json_types import JSONObject
from agentloom.llm.client import LLM
from agentloom.llm.types import Message
from agentloom.text import clip

__all__ = [
    "DEFAULT_INSTRUCTIONS",
    "LAST_RESULT",
    "OperativeAgent",
    "RememberTool",
    "TickReport",
    "system_prompt",
]

log = logging.getLogger(__name__)

DEFAULT_INSTRUCTIONS: Final = (
    "You are an operative: a persistent agent woken up on a schedule. Each wake-up (a tick) "
    "you see the conversation of your earlier ticks and your saved state. Carry on with your "
    "task using your tools, and end each tick with a short report of what you did and found."
)
REMEMBER_HINT: Final = (
    "To keep something for your later ticks, call `remember` with a key and a value (null "
    "forgets the key); your saved state is shown to you here at the start of every tick."
)
LAST_RESULT: Final = "last_result"
SUMMARY_CHARS: Final = 1000


class RememberTool(Tool):
    """Writes one key of the operative's saved state (the session of the call's context)."""

    name = "remember"
    description = (
        "Save a value under a key in your saved state, for your later ticks. A null value "
        "forgets the key."
    )
    parameters: JSONObject = {
        "type": "object",
        "properties": {
            "key": {"type": "string", "description": "A short name for what you keep."},
            "value": {"description": "Any JSON value to keep; null forgets the key."},
        },
        "required": ["key", "value"],
    }

    def __init__(self, store: SessionStore, agent: str, session_id: str) -> None:
        self.store = store
        self.agent = agent
        self.session_id = session_id

    async def call(self, arguments: JSONObject, context: AgentContext) -> str:
        key = arguments.get("key")
        if not isinstance(key, str) or not key.strip():
            raise ToolError("give the 'key' to save under, a non-empty string")
        if "value" not in arguments:
            raise ToolError("give the 'value' to save (null forgets the key)")
        value = arguments["value"]
        session = context.session_id or self.session_id
        state = await self.store.update_state(self.agent, session, {key.strip(): value})
        done = "Forgot" if value is None else "Saved"
        return f"{done} {key.strip()!r}. Saved keys: {', '.join(sorted(state)) or '(none)'}."


@frozen
class TickReport:
    """One scheduled tick: its record, and its result unless it failed (``error`` says why)."""

    record: TickRecord | None
    result: AgentResult | None = None
    error: str | None = None


def system_prompt(instructions: str | None, task: str | None, state: JSONObject) -> str:
    """A tick's system prompt: the instructions, the task, the saved state as JSON."""
    shown = json.dumps(state, indent=2, sort_keys=True, ensure_ascii=False) if state else "(empty)"
    parts = [instructions or DEFAULT_INSTRUCTIONS]
    if task:
        parts.append(f"Your task:\n{task}")
    parts += [f"Your saved state (from earlier ticks):\n{shown}", REMEMBER_HINT]
    return "\n\n".join(parts)


class OperativeAgent(BaseAgent):
    """A persistent agent run in ticks (see the module doc). ``agent_name`` names its sessions
    in the store; the session is the context's ``session_id``, else ``session_id``."""

    name = "operative"
    description = "Scheduled and persistent: each tick resumes its session's history and state."

    def __init__(
        self,
        llm: LLM,
        tools: Sequence[Tool] = (),
        *,
        store: SessionStore,
        task: str | None = None,
        session_id: str = "default",
        agent_name: str = "operative",
        instructions: str | None = None,
        max_turns: int = 10,
        max_history: int = 40,
        auto_save: bool = True,
    ) -> None:
        super().__init__(llm, instructions=instructions)
        if max_history < 1:
            raise ValueError("max_history must be at least 1")
        self.store = store
        self.task = task
        self.session_id = session_id
        self.agent_name = agent_name
        self.max_history = max_history
        self.auto_save = auto_save
        remember = RememberTool(store, agent_name, session_id)
        self.loop = OrchestratorAgent(llm, [*tools, remember], max_turns=max_turns)
        self.last_tick: TickRecord | None = None

    # --- ticks -------------------------------------------------------------------------------

    async def tick(self, input: str | None = None, *, session_id: str | None = None) -> AgentResult:
        """One tick of ``session_id`` (default: the agent's), on ``input`` (default: the task)."""
        given = input if input is not None else self.task
        if not given:
            raise ValueError("an operative tick needs an input or the agent's task")
        return await self.run(given, AgentContext(session_id=session_id or self.session_id))

    async def run_every(
        self,
        interval_s: float,
        ticks: int | None = None,
        stop_event: asyncio.Event | None = None,
        *,
        input: str | None = None,
        session_id: str | None = None,
    ) -> list[TickReport]:
        """Tick every ``interval_s`` seconds until ``ticks`` have run or ``stop_event`` is set."""
        if interval_s < 0:
            raise ValueError("interval_s must not be negative")
        stop = stop_event or asyncio.Event()
        clock = asyncio.get_running_loop()
        reports: list[TickReport] = []
        while not stop.is_set() and (ticks is None or len(reports) < ticks):
            started = clock.time()
            reports.append(await self._scheduled(input, session_id))
            if ticks is not None and len(reports) >= ticks:
                break
            if await _stopped(stop, interval_s - (clock.time() - started)):
                break
        return reports

    async def _scheduled(self, input: str | None, session_id: str | None) -> TickReport:
        self.last_tick = None
        try:
            result = await self.tick(input, session_id=session_id)
        except Exception as exc:  # the schedule goes on; the tick's record says it failed
            log.warning("operative %s: a tick failed", self.agent_name, exc_info=True)
            return TickReport(self.last_tick, None, _why(exc))
        return TickReport(self.last_tick, result)

    # --- one tick as a stream ----------------------------------------------------------------

    def stream(
        self, input: AgentInput, context: AgentContext | None = None
    ) -> AsyncGenerator[AgentEvent, None]:
        given = context or AgentContext()
        session = given.session_id or self.session_id
        return self._tick(input, replace(given, session_id=session), session)

    async def _tick(
        self, input: AgentInput, context: AgentContext, session: str
    ) -> AsyncGenerator[AgentEvent, None]:
        record = self.last_tick = await self.store.start_tick(self.agent_name, session)
        try:
            saved = await self.store.load(self.agent_name, session)
            result: AgentResult | None = None
            conversation = await self._conversation(input, saved, record)
            async with aclosing(self.loop.stream(conversation, context)) as events:
                async for event in events:
                    if isinstance(event, AgentFinished):
                        result = event.result
                    else:
                        yield event
            if result is None:
                raise RuntimeError("the operative's loop ended without a result")
            result = await self._save(session, result)
        except BaseException as exc:
            self.last_tick = await self.store.finish_tick(record.id, "error", _why(exc))
            raise
        status: TickStatus = "ok" if result.stop_reason == "final" else "incomplete"
        self.last_tick = await self.store.finish_tick(
            record.id, status, clip(result.content, SUMMARY_CHARS)
        )
        metadata = {**result.metadata, "session_id": session, "tick": record.number}
        yield AgentFinished(replace(result, metadata=metadata))

    # --- the two steps a strategy built on the operative may extend -----------------------------

    async def _conversation(
        self, input: AgentInput, saved: SavedSession, record: TickRecord
    ) -> list[Message]:
        """What the tick's loop starts from: the system prompt, the history, the tick's message."""
        system = Message.system(system_prompt(self.instructions, self.task, saved.state))
        return [system, *saved.history, *_tick_messages(input, record)]

    async def _save(self, session: str, result: AgentResult) -> AgentResult:
        """Save what the tick leaves (its history, the auto-saved state); the result to report."""
        history = trim_history(result.messages[1:], self.max_history)  # the system prompt is not
        await self.store.save_history(self.agent_name, session, history)
        if self.auto_save:
            await self.store.update_state(self.agent_name, session, {LAST_RESULT: result.content})
        return result

    async def aclose(self) -> None:
        """Close the agent's tools."""
        await self.loop.aclose()


def _tick_messages(input: AgentInput, record: TickRecord) -> list[Message]:
    if not isinstance(input, str):
        return list(input)
    when = datetime.fromtimestamp(record.started_at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return [Message.user(f"Tick {record.number} ({when}): {input}")]


async def _stopped(stop: asyncio.Event, seconds: float) -> bool:
    """Wait ``seconds`` (or not at all); whether ``stop`` was set meanwhile."""
    try:
        async with asyncio.timeout(max(seconds, 0)):
            await stop.wait()
    except TimeoutError:
        return stop.is_set()
    return True


def _why(exc: BaseException) -> str:
    if isinstance(exc, asyncio.CancelledError | GeneratorExit):
        return "cancelled"
    return clip(f"{type(exc).__name__}: {exc}", SUMMARY_CHARS)
