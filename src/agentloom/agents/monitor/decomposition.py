"""The ``task_decomposition`` axis: whether a monitor works its task through in phases.

- ``phased``: on the session's first tick one model call splits the task (the agent's, else
  that tick's input) into 2 to 6 phases, each a title and a check that tells when it is done
  (a reply with no usable phase gives one phase: the whole task). The plan is kept in the
  session's state; each tick's system prompt shows it with the current phase marked, the
  current phase joins the focus memories are recalled for, and the model is offered
  ``finish_phase(summary)``, which marks the current phase done (with its summary) and moves
  on, at once in the saved state. Once every phase is done the prompt says so.
- ``hierarchical``: phases, each split into steps (:mod:`.hierarchy`).
- ``monolithic``: no plan; every tick works on the whole task. ``single`` is the same choice
  under its earlier name.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from dataclasses import replace
from typing import ClassVar, Final, Generic, Protocol, Self, TypeVar

from agentloom.agents.base import AgentContext
from agentloom.agents.monitor.side import SideModel, json_reply
from agentloom.agents.saved_history import SessionDataError
from agentloom.agents.sessions import SessionStore
from agentloom.agents.tools.base import Tool, ToolError
from agentloom.frozen import frozen
from agentloom.json_types import JSONObject, JSONValue
from agentloom.text import clip

__all__ = [
    "TASK_DECOMPOSITIONS",
    "AdvanceTool",
    "FinishPhaseTool",
    "Phase",
    "Phased",
    "Plan",
    "PlanView",
    "Single",
    "TaskDecomposition",
]

MAX_PHASES: Final = 6
TITLE_CHARS: Final = 200
SUMMARY_CHARS: Final = 500
PLAN_KEY: Final = "monitor.phased"

PLANNING_INSTRUCTIONS: Final = (
    "Split the long-running task below into 2 to 6 phases, to be worked through one after "
    "the other over many work sessions. Give each phase a short title and the check that "
    "tells when it is done. Reply with a JSON array only, each item "
    '{"title": "...", "done_when": "..."}.'
)
FINISH_HINT: Final = (
    "Work on the current phase. When it is done, call `finish_phase` with a short summary of "
    "what it achieved, then go on with the next one."
)


@frozen
class PlanView:
    """A plan as a tick sees it: the prompt's section, and what to recall memories for."""

    text: str
    focus: str | None


class TaskDecomposition(Protocol):
    @property
    def key(self) -> str:
        """The plan's slot in the session's state."""
        ...

    async def prepare(self, task: str, plan: JSONValue, side: SideModel) -> JSONValue:
        """The plan for this tick: ``plan`` as saved (``None`` at first), or a new one."""
        ...

    def view(self, plan: JSONValue) -> PlanView | None:
        """What the tick's system prompt shows of ``plan`` (``None``: nothing)."""
        ...

    def tools(self, store: SessionStore, agent: str, session_id: str) -> list[Tool]:
        """The tools the model tracks its plan with."""
        ...


# --- the plan --------------------------------------------------------------------------------


@frozen
class Phase:
    title: str
    done_when: str = ""
    summary: str | None = None  # set when done


@frozen
class Plan:
    phases: tuple[Phase, ...]
    current: int = 0  # the phase being worked on; len(phases) once every one is done

    @property
    def done(self) -> bool:
        return self.current >= len(self.phases)

    def finished(self, summary: str) -> Plan:
        """The plan with the current phase done."""
        phases = list(self.phases)
        phases[self.current] = replace(phases[self.current], summary=summary)
        return Plan(tuple(phases), self.current + 1)

    def position(self) -> str:
        return f"phase {self.current + 1} of {len(self.phases)}"

    def lines(self) -> list[str]:
        return [self._line(n, phase) for n, phase in enumerate(self.phases)]

    def _line(self, n: int, phase: Phase) -> str:
        mark = "done" if n < self.current else "current" if n == self.current else "next"
        check = f" (done when: {phase.done_when})" if phase.done_when else ""
        said = f": {phase.summary}" if phase.summary else ""
        return f"{n + 1}. [{mark}] {phase.title}{said if n < self.current else check}"

    def to_json(self) -> JSONObject:
        phases: list[JSONValue] = [
            {"title": p.title, "done_when": p.done_when, "summary": p.summary} for p in self.phases
        ]
        return {"phases": phases, "current": self.current}

    @classmethod
    def from_json(cls, value: JSONValue) -> Plan:
        if not isinstance(value, dict):
            raise _malformed()
        phases, current = value.get("phases"), value.get("current")
        if not isinstance(phases, list) or not phases or not isinstance(current, int):
            raise _malformed()
        plan = cls(tuple(_stored_phase(p) for p in phases), current)
        if not 0 <= current <= len(plan.phases):
            raise _malformed()
        return plan


def _stored_phase(value: JSONValue) -> Phase:
    if not isinstance(value, dict):
        raise _malformed()
    title, done_when, summary = value.get("title"), value.get("done_when"), value.get("summary")
    if not isinstance(title, str) or not isinstance(done_when, str):
        raise _malformed()
    if summary is not None and not isinstance(summary, str):
        raise _malformed()
    return Phase(title, done_when, summary)


def _malformed() -> SessionDataError:
    return SessionDataError("the saved state's monitor plan (phased) is malformed")


# --- phased ----------------------------------------------------------------------------------


class Phased:
    """Plan once, then work phase by phase (module doc)."""

    key = PLAN_KEY

    async def prepare(self, task: str, plan: JSONValue, side: SideModel) -> JSONValue:
        if plan is not None:
            return Plan.from_json(plan).to_json()
        reply = await side.ask(PLANNING_INSTRUCTIONS, f"The task:\n{task}")
        phases = _phases(json_reply(reply)) or (Phase(clip(task, TITLE_CHARS), "the task is done"),)
        return Plan(phases).to_json()

    def view(self, plan: JSONValue) -> PlanView | None:
        if plan is None:
            return None
        kept = Plan.from_json(plan)
        lines = "\n".join(kept.lines())
        if kept.done:
            text = f"Every phase of your plan is done:\n{lines}\nCheck that the task is complete."
            return PlanView(text, None)
        head = f"Your plan ({kept.position()} is current):"
        return PlanView(f"{head}\n{lines}\n{FINISH_HINT}", kept.phases[kept.current].title)

    def tools(self, store: SessionStore, agent: str, session_id: str) -> list[Tool]:
        return [FinishPhaseTool(store, agent, session_id)]


def _phases(reply: JSONValue) -> tuple[Phase, ...]:
    """The usable phases of a planning reply: items with a title (or plain strings)."""
    if not isinstance(reply, list):
        return ()
    phases = [_phase(item) for item in reply]
    return tuple(phase for phase in phases if phase is not None)[:MAX_PHASES]


def _phase(item: JSONValue) -> Phase | None:
    if isinstance(item, str):
        item = {"title": item}
    if not isinstance(item, dict):
        return None
    title, done_when = item.get("title"), item.get("done_when")
    if not isinstance(title, str) or not title.strip():
        return None
    check = clip(done_when, TITLE_CHARS, squash=True) if isinstance(done_when, str) else ""
    return Phase(clip(title, TITLE_CHARS, squash=True), check)


class Advancing(Protocol):
    """A saved plan the model moves through with a finish tool (:class:`Plan`, the
    hierarchy's plan)."""

    @property
    def done(self) -> bool: ...

    def finished(self, summary: str) -> Self: ...

    def to_json(self) -> JSONObject: ...


A = TypeVar("A", bound=Advancing)


class AdvanceTool(Tool, Generic[A]):
    """Marks the current ``unit`` of the session's plan (saved under ``key``) done, with the
    model's summary, and moves to the next: at once, in the saved state."""

    unit: ClassVar[str]
    key: ClassVar[str]

    def __init__(self, store: SessionStore, agent: str, session_id: str) -> None:
        self.store = store
        self.agent = agent
        self.session_id = session_id
        self.parameters = {
            "type": "object",
            "properties": {
                "summary": {
                    "type": "string",
                    "description": f"What the {self.unit} achieved, briefly.",
                },
            },
            "required": ["summary"],
        }

    @abstractmethod
    def load(self, saved: JSONValue) -> A:
        """The plan as saved in the session's state."""

    @abstractmethod
    def message(self, before: A, after: A) -> str:
        """What the model is told once ``before`` moved on to ``after``."""

    async def call(self, arguments: JSONObject, context: AgentContext) -> str:
        summary = arguments.get("summary")
        if not isinstance(summary, str) or not summary.strip():
            unit = self.unit
            raise ToolError(f"give the 'summary' of what the {unit} achieved, a non-empty string")
        session = context.session_id or self.session_id
        saved = (await self.store.load(self.agent, session)).state.get(self.key)
        if saved is None:
            raise ToolError("there is no plan to advance")
        plan = self.load(saved)
        if plan.done:
            raise ToolError(f"every {self.unit} of the plan is already done")
        done = plan.finished(clip(summary, SUMMARY_CHARS, squash=True))
        await self.store.update_state(self.agent, session, {self.key: done.to_json()})
        return self.message(plan, done)


class FinishPhaseTool(AdvanceTool[Plan]):
    """Marks the current phase of the session's plan done and moves to the next."""

    name = "finish_phase"
    description = (
        "Mark the current phase of your plan done, with a short summary of what it achieved; "
        "the next phase becomes current."
    )
    unit = "phase"
    key = PLAN_KEY

    def load(self, saved: JSONValue) -> Plan:
        return Plan.from_json(saved)

    def message(self, before: Plan, after: Plan) -> str:
        return _finished_message(after)


def _finished_message(plan: Plan) -> str:
    finished = f"Phase {plan.current} of {len(plan.phases)} is done."
    if plan.done:
        return f"{finished} Every phase of the plan is done."
    phase = plan.phases[plan.current]
    check = f" (done when: {phase.done_when})" if phase.done_when else ""
    return f"{finished} Now {plan.position()}: {phase.title}{check}."


# --- single ----------------------------------------------------------------------------------


class Single:
    """No plan: the whole task every tick."""

    key = "monitor.single"

    async def prepare(self, task: str, plan: JSONValue, side: SideModel) -> JSONValue:
        return None

    def view(self, plan: JSONValue) -> PlanView | None:
        return None

    def tools(self, store: SessionStore, agent: str, session_id: str) -> list[Tool]:
        return []


def _hierarchical() -> TaskDecomposition:
    from agentloom.agents.monitor.hierarchy import Hierarchical  # it builds on PlanView above

    return Hierarchical()


TASK_DECOMPOSITIONS: dict[str, Callable[[], TaskDecomposition]] = {
    "phased": Phased,
    "monolithic": Single,
    "hierarchical": _hierarchical,
    "single": Single,
}
