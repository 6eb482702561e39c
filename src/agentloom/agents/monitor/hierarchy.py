"""The ``hierarchical`` task decomposition: phases, each split into steps.

On the session's first tick one model call splits the task (the agent's, else that tick's
input) into 2 to 5 phases and each phase into 1 to 5 concrete steps (a phase given no steps is
one step, itself; a reply with no usable phase is one phase and one step: the whole task). The
plan is kept in the session's state under ``monitor.hierarchical``. Each tick's system prompt
shows the tree with the current phase and step marked (done steps with their summaries), the
current phase and step join the focus memories are recalled for, and the model is offered
``finish_step(summary)``: it marks the current step done and moves to the next step, or, after
a phase's last step, to the first step of the next phase, at once in the saved state.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from agentloom.agents.monitor.decomposition import AdvanceTool, PlanView
from agentloom.agents.monitor.side import SideModel, json_reply
from agentloom.agents.saved_history import SessionDataError
from agentloom.agents.sessions import SessionStore
from agentloom.agents.tools.base import Tool
from agentloom.frozen import frozen
from agentloom.json_types import JSONObject, JSONValue
from agentloom.text import clip

__all__ = ["HIERARCHY_KEY", "Hierarchical", "Hierarchy", "Stage", "Step"]

MAX_PHASES: Final = 5
MAX_STEPS: Final = 5
TITLE_CHARS: Final = 200
HIERARCHY_KEY: Final = "monitor.hierarchical"

HIERARCHY_INSTRUCTIONS: Final = (
    "Split the long-running task below into 2 to 5 phases, to be worked through one after the "
    "other over many work sessions, and split each phase into 1 to 5 concrete steps, in order. "
    'Reply with a JSON array only, each item {"title": "<phase>", "steps": ["<step>", ...]}.'
)
FINISH_STEP_HINT: Final = (
    "Work on the current step. When it is done, call `finish_step` with a short summary of "
    "what it achieved, then go on with the next one."
)


@frozen
class Step:
    title: str
    summary: str | None = None  # set when done


@frozen
class Stage:
    """A phase of the hierarchy and its steps."""

    title: str
    steps: tuple[Step, ...]


@frozen
class Hierarchy:
    stages: tuple[Stage, ...]
    phase: int = 0  # the current phase; len(stages) once every one is done
    step: int = 0  # the current step of the current phase

    @property
    def done(self) -> bool:
        return self.phase >= len(self.stages)

    def current(self) -> tuple[Stage, Step]:
        stage = self.stages[self.phase]
        return stage, stage.steps[self.step]

    def finished(self, summary: str) -> Hierarchy:
        """The plan with the current step done, the next one current."""
        stage, step = self.current()
        steps = list(stage.steps)
        steps[self.step] = replace(step, summary=summary)
        stages = list(self.stages)
        stages[self.phase] = Stage(stage.title, tuple(steps))
        if self.step + 1 < len(steps):
            return Hierarchy(tuple(stages), self.phase, self.step + 1)
        return Hierarchy(tuple(stages), self.phase + 1, 0)

    def position(self) -> str:
        stage = self.stages[self.phase]
        return (
            f"phase {self.phase + 1} of {len(self.stages)}, "
            f"step {self.step + 1} of {len(stage.steps)}"
        )

    def lines(self) -> list[str]:
        lines: list[str] = []
        for p, stage in enumerate(self.stages):
            lines.append(f"{p + 1}. [{_mark((p,), (self.phase,))}] {stage.title}")
            for s, step in enumerate(stage.steps):
                mark = _mark((p, s), (self.phase, self.step))
                said = f": {step.summary}" if step.summary and mark == "done" else ""
                lines.append(f"   {p + 1}.{s + 1} [{mark}] {step.title}{said}")
        return lines

    def to_json(self) -> JSONObject:
        stages: list[JSONValue] = [
            {
                "title": st.title,
                "steps": [{"title": s.title, "summary": s.summary} for s in st.steps],
            }
            for st in self.stages
        ]
        return {"phases": stages, "phase": self.phase, "step": self.step}

    @classmethod
    def from_json(cls, value: JSONValue) -> Hierarchy:
        if not isinstance(value, dict):
            raise _malformed()
        stages, phase, step = value.get("phases"), value.get("phase"), value.get("step")
        if not isinstance(stages, list) or not stages:
            raise _malformed()
        if not isinstance(phase, int) or not isinstance(step, int):
            raise _malformed()
        plan = cls(tuple(_stored_stage(s) for s in stages), phase, step)
        if not 0 <= phase <= len(plan.stages):
            raise _malformed()
        if not plan.done and not 0 <= step < len(plan.stages[phase].steps):
            raise _malformed()
        return plan


def _mark(at: tuple[int, ...], current: tuple[int, ...]) -> str:
    return "done" if at < current else "current" if at == current else "next"


def _stored_stage(value: JSONValue) -> Stage:
    if not isinstance(value, dict):
        raise _malformed()
    title, steps = value.get("title"), value.get("steps")
    if not isinstance(title, str) or not isinstance(steps, list) or not steps:
        raise _malformed()
    return Stage(title, tuple(_stored_step(step) for step in steps))


def _stored_step(value: JSONValue) -> Step:
    if not isinstance(value, dict):
        raise _malformed()
    title, summary = value.get("title"), value.get("summary")
    if not isinstance(title, str) or not (summary is None or isinstance(summary, str)):
        raise _malformed()
    return Step(title, summary)


def _malformed() -> SessionDataError:
    return SessionDataError("the saved state's monitor plan (hierarchical) is malformed")


class Hierarchical:
    """Plan phases and steps once, then work step by step (module doc)."""

    key = HIERARCHY_KEY

    async def prepare(self, task: str, plan: JSONValue, side: SideModel) -> JSONValue:
        if plan is not None:
            return Hierarchy.from_json(plan).to_json()
        reply = await side.ask(HIERARCHY_INSTRUCTIONS, f"The task:\n{task}")
        stages = _stages(json_reply(reply))
        if not stages:
            title = clip(task, TITLE_CHARS, squash=True)
            stages = (Stage(title, (Step(title),)),)
        return Hierarchy(stages).to_json()

    def view(self, plan: JSONValue) -> PlanView | None:
        if plan is None:
            return None
        kept = Hierarchy.from_json(plan)
        lines = "\n".join(kept.lines())
        if kept.done:
            text = f"Every step of your plan is done:\n{lines}\nCheck that the task is complete."
            return PlanView(text, None)
        stage, step = kept.current()
        head = f"Your plan ({kept.position()} is current):"
        return PlanView(f"{head}\n{lines}\n{FINISH_STEP_HINT}", f"{stage.title}\n{step.title}")

    def tools(self, store: SessionStore, agent: str, session_id: str) -> list[Tool]:
        return [FinishStepTool(store, agent, session_id)]


def _stages(reply: JSONValue) -> tuple[Stage, ...]:
    """The usable phases of a planning reply, each with its usable steps."""
    if not isinstance(reply, list):
        return ()
    stages = [_stage(item) for item in reply]
    return tuple(stage for stage in stages if stage is not None)[:MAX_PHASES]


def _stage(item: JSONValue) -> Stage | None:
    if isinstance(item, str):
        item = {"title": item}
    if not isinstance(item, dict):
        return None
    title, given = item.get("title"), item.get("steps")
    if not isinstance(title, str) or not title.strip():
        return None
    title = clip(title, TITLE_CHARS, squash=True)
    listed = given if isinstance(given, list) else []
    named = [clip(s, TITLE_CHARS, squash=True) for s in listed if isinstance(s, str)]
    steps = [Step(name) for name in named if name]
    return Stage(title, tuple(steps[:MAX_STEPS]) or (Step(title),))


class FinishStepTool(AdvanceTool[Hierarchy]):
    """Marks the current step of the session's plan done and moves to the next."""

    name = "finish_step"
    description = (
        "Mark the current step of your plan done, with a short summary of what it achieved; "
        "the next step (or the next phase's first) becomes current."
    )
    unit = "step"
    key = HIERARCHY_KEY

    def load(self, saved: JSONValue) -> Hierarchy:
        return Hierarchy.from_json(saved)

    def message(self, before: Hierarchy, after: Hierarchy) -> str:
        return _finished_message(before, after)


def _finished_message(before: Hierarchy, after: Hierarchy) -> str:
    finished = f"Step {before.phase + 1}.{before.step + 1} is done."
    if after.done:
        return f"{finished} Every step of the plan is done."
    stage, step = after.current()
    moved = f" Phase {before.phase + 1} is done." if after.phase != before.phase else ""
    return f"{finished}{moved} Now {after.position()}: {stage.title} / {step.title}."
