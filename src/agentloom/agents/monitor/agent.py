"""The monitor operative: the operative (:mod:`agentloom.agents.operative`) for long-horizon
work, with four pluggable strategy axes (:mod:`.strategies`).

A tick is the operative's tick with a step before the loop and one after it:

1. before: the task decomposition prepares the plan (planning it on the session's first tick)
   and the retrieval strategy picks, among the memory's entries, those to recall for the tick's
   focus (its input and the current phase); the system prompt is the operative's (instructions,
   task, saved state, ``remember``) followed by the plan and the recalled entries;
2. the loop runs with every tool's observations passed through the observation compression
   (and the decomposition's tools, ``finish_phase`` for ``phased``, offered besides
   ``remember``);
3. after: the memory extraction learns from the tick's trace (input, observations of the
   task's tools, report), then the operative saves the history and ``last_result``.

What the axes keep is saved in the session's state under ``monitor.<choice>`` keys (the
memory's and the plan's), shown to the model only through their own sections, so it survives
restarts like the rest of the state. A failing model call anywhere fails the tick as the
operative's do: recorded as ``error``, no history saved. The result's usage counts every model
call of the tick, and its metadata adds ``strategies`` and ``recalled`` (the entries shown).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from agentloom.agents.base import AgentInput, AgentResult
from agentloom.agents.monitor.compression import CompressedTool
from agentloom.agents.monitor.decomposition import PlanView
from agentloom.agents.monitor.memory import MemoryEntry, TickTrace
from agentloom.agents.monitor.side import SideModel
from agentloom.agents.monitor.strategies import MonitorStrategies
from agentloom.agents.operative import OperativeAgent, RememberTool
from agentloom.agents.sessions import SavedSession, SessionStore, TickRecord
from agentloom.agents.tools.base import Tool
from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.json_types import JSONObject, JSONValue
from agentloom.llm.client import LLM
from agentloom.llm.types import Message

__all__ = ["MONITOR_INSTRUCTIONS", "MonitorOperativeAgent"]

MONITOR_INSTRUCTIONS: Final = (
    "You are a monitor: a persistent agent woken up on a schedule to carry a long-running task "
    "forward. Each wake-up (a tick) you see the conversation of your earlier ticks, your plan, "
    "what you recall from earlier ticks and your saved state. Make progress with your tools, "
    "and end each tick with a short report of what you did and found."
)
STATE_PREFIX: Final = "monitor."


@frozen
class _Tick:
    """What the step before the loop leaves for the step after it."""

    number: int
    input: str
    memory: JSONValue
    recalled: int


class MonitorOperativeAgent(OperativeAgent):
    """An operative with memory, compression, retrieval and decomposition strategies (see
    the module doc). Like every tool-using agent it runs one tick at a time. The choices are
    ``strategies``, or the axes as keywords (``memory_extraction="scratchpad"``, as the seed
    gives them), the defaults elsewhere."""

    name = "monitor_operative"
    description = "Long-horizon operative: memory, compression, recall and phases as strategies."

    def __init__(
        self,
        llm: LLM,
        tools: Sequence[Tool] = (),
        *,
        store: SessionStore,
        strategies: MonitorStrategies | None = None,
        task: str | None = None,
        session_id: str = "default",
        agent_name: str = "monitor_operative",
        instructions: str | None = None,
        max_turns: int = 10,
        max_history: int = 40,
        auto_save: bool = True,
        **axes: str,
    ) -> None:
        if axes and strategies is not None:
            raise InvalidRequestError("give the strategies or the axes' choices, not both")
        self.strategies = strategies or MonitorStrategies.parse(axes)
        self.side = SideModel(llm)
        self.memory = self.strategies.memory()
        self.retrieval = self.strategies.retrieval()
        self.decomposition = self.strategies.decomposition()
        compression = self.strategies.compression()
        wrapped = [CompressedTool(tool, compression, self.side) for tool in tools]
        own = self.decomposition.tools(store, agent_name, session_id)
        self._own_tools = frozenset({RememberTool.name, *(tool.name for tool in own)})
        self._current: _Tick | None = None
        super().__init__(
            llm,
            [*wrapped, *own],
            store=store,
            task=task,
            session_id=session_id,
            agent_name=agent_name,
            instructions=instructions or MONITOR_INSTRUCTIONS,
            max_turns=max_turns,
            max_history=max_history,
            auto_save=auto_save,
        )

    # --- before the loop ---------------------------------------------------------------------

    async def _conversation(
        self, input: AgentInput, saved: SavedSession, record: TickRecord
    ) -> list[Message]:
        self.side.reset()
        given = _input_text(input)
        view = self.decomposition.view(await self._plan(given, saved, record.session_id))
        memory = saved.state.get(self.memory.key)
        focus = "\n".join(text for text in (given, view.focus if view else None) if text)
        recalled = await self.retrieval.recall(focus, self.memory.entries(memory), self.side)
        self._current = _Tick(record.number, given, memory, len(recalled))
        shown = replace(saved, state=_visible(saved.state))
        messages = await super()._conversation(input, shown, record)
        sections = [str(messages[0].content), *_sections(view, recalled)]
        return [Message.system("\n\n".join(sections)), *messages[1:]]

    async def _plan(self, given: str, saved: SavedSession, session: str) -> JSONValue:
        key = self.decomposition.key
        stored = saved.state.get(key)
        plan = await self.decomposition.prepare(self.task or given, stored, self.side)
        if plan != stored:
            await self.store.update_state(self.agent_name, session, {key: plan})
        return plan

    # --- after the loop ----------------------------------------------------------------------

    async def _save(self, session: str, result: AgentResult) -> AgentResult:
        tick = self._current
        if tick is None:
            raise RuntimeError("the monitor saved a tick it did not start")
        seen = tuple(o for o in result.tool_results if o.name not in self._own_tools)
        trace = TickTrace(tick.number, tick.input, seen, result.content)
        memory = await self.memory.extract(trace, tick.memory, self.side)
        await self.store.update_state(self.agent_name, session, {self.memory.key: memory})
        saved = await super()._save(session, result)
        metadata: JSONObject = {
            **saved.metadata,
            "strategies": {**self.strategies.as_json()},
            "recalled": tick.recalled,
        }
        return replace(saved, usage=saved.usage.merge(self.side.reset()), metadata=metadata)


def _input_text(input: AgentInput) -> str:
    """The tick's input as text (the last user message of a conversation)."""
    if isinstance(input, str):
        return input
    said = [m.content for m in input if m.role == "user" and isinstance(m.content, str)]
    return said[-1] if said else ""


def _visible(state: JSONObject) -> JSONObject:
    """The state the prompt shows as JSON: the axes' own keys have sections of their own."""
    return {key: value for key, value in state.items() if not key.startswith(STATE_PREFIX)}


def _sections(view: PlanView | None, recalled: Sequence[MemoryEntry]) -> list[str]:
    sections = [view.text] if view else []
    if recalled:
        lines = "\n".join(f"- {entry.line}" for entry in recalled)
        sections.append(f"What you recall from earlier ticks (chosen for this tick):\n{lines}")
    return sections
