"""Running a task set: every (strategy, task) pair not yet in the run file, a bounded number at
a time, each under a deadline, each recorded as it finishes.

A task runs on an agent built for it by name (``agents/builders.py``) with the run's tools, a
folder of its own for what the agent keeps (memory notes, an operative's sessions) and the task
file's folder as workspace (so ``file_read`` reads a ``qa`` task's attachment):

- ``qa``: the question, scored on the reply;
- ``retrieval``: the question, with ``search_documents`` over the run's document index added
  to the tools; also records which of the task's evidence documents the searches returned;
- ``sessions``: each session on a fresh agent, in order, what carries over chosen by ``carry``:
  ``conversation`` (the earlier sessions' messages start the next; an operative resumes its
  own saved session instead), ``memory`` (a fresh conversation; ``memory_store`` /
  ``memory_search`` added, their notes kept for the task) or ``none``. The task's score is the
  mean of its scored sessions.

A task that errs (the model's endpoint failed, a strategy refused its tools) is recorded as
``error`` and scores 0, one past its deadline as ``timeout`` (the sessions it finished kept);
anything else is a bug and stops the run, whose finished tasks stay in the run file.
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeAlias

from agentloom.agents.base import AgentContext, AgentResult, BaseAgent
from agentloom.agents.builders import AgentOptions, build_agent, build_tools
from agentloom.agents.operative import OperativeAgent
from agentloom.agents.sessions import SessionStore
from agentloom.agents.tools.base import Tool, ToolEnvironment
from agentloom.config import Settings
from agentloom.errors import AgentloomError, InvalidRequestError
from agentloom.evals.documents import DocumentIndex, SearchDocumentsTool
from agentloom.evals.records import RunFile, RunFileError, SessionOutcome, TaskRecord, TokenUsage
from agentloom.evals.scorers import score
from agentloom.evals.strategies import Strategy
from agentloom.evals.tasks import QATask, RetrievalTask, SessionsTask, TaskSet
from agentloom.frozen import frozen
from agentloom.llm.client import LLM
from agentloom.llm.types import Message

__all__ = ["INSTRUCTIONS", "Carry", "EvalSettings", "LLMFactory", "run_eval"]

Carry: TypeAlias = Literal["conversation", "memory", "none"]
LLMFactory: TypeAlias = Callable[[str], LLM]  # model name -> an LLM on it (closed after)
AnyTask: TypeAlias = QATask | RetrievalTask | SessionsTask
MEMORY_TOOLS = ("memory_store", "memory_search")

_ANSWER_FORMAT = (
    "End your reply with one line 'FINAL ANSWER: <answer>'. The answer is a number, as few "
    "words as possible, or a comma-separated list of numbers and words: no thousands "
    "separators or units in a number unless asked, no articles or abbreviations in words."
)
INSTRUCTIONS: dict[str, str] = {
    "qa": "Answer the question; use your tools where they help. " + _ANSWER_FORMAT,
    "retrieval": (
        "Answer the question from the document collection: search it with search_documents, "
        "once per fact the question links (the answer of one search may be what the next one "
        "needs), and rely on what the documents say. " + _ANSWER_FORMAT
    ),
    "sessions": (
        "You talk with the same user over several sessions. Keep track of what they tell you; "
        "when a message only tells you something, acknowledge it briefly. When asked a "
        "question, answer it. " + _ANSWER_FORMAT
    ),
}


@frozen
class EvalSettings:
    """How the run goes. ``model`` is the model of a strategy that names none; ``instructions``
    replace the default instructions of every kind (:data:`INSTRUCTIONS`)."""

    model: str
    strategies: tuple[Strategy, ...]
    tools: tuple[str, ...] = ()
    max_turns: int = 10
    instructions: str | None = None
    concurrency: int = 4
    task_timeout: float = 300.0
    carry: Carry = "conversation"
    retry_failed: bool = False
    settings: Settings = field(default_factory=Settings, repr=False)  # the tools' configuration

    def model_of(self, strategy: Strategy) -> str:
        return strategy.model or self.model


@dataclass
class _Progress:
    """What a task has done so far (kept when its deadline cuts it short)."""

    reply: str = ""
    usage: TokenUsage = field(default_factory=TokenUsage)
    tool_calls: int = 0
    turns: int = 0
    sessions: list[SessionOutcome] = field(default_factory=list)
    score: float = 0.0
    evidence_recall: float | None = None

    def add(self, result: AgentResult) -> None:
        self.reply = result.content
        self.usage = self.usage.plus(_usage(result))
        self.tool_calls += len(result.tool_results)
        self.turns += result.turns


def _usage(result: AgentResult) -> TokenUsage:
    used = result.usage
    return TokenUsage(
        input_tokens=used.input_tokens,
        output_tokens=used.output_tokens,
        cached_tokens=used.cached_tokens,
        reasoning_tokens=used.reasoning_tokens,
        model_calls=used.model_calls,
    )


async def run_eval(
    tasks: TaskSet,
    settings: EvalSettings,
    run_file: RunFile,
    llms: LLMFactory,
    *,
    scratch: Path,
    index: DocumentIndex | None = None,
    on_record: Callable[[TaskRecord], None] | None = None,
) -> list[TaskRecord]:
    """Run what ``run_file`` does not hold yet; every record of the run, task by strategy.
    ``scratch``: a folder for what agents keep during a task. ``index``: the document set of
    ``retrieval`` tasks (required when there are any)."""
    runner = _Runner(tasks, settings, run_file, llms, scratch, index, on_record)
    return await runner.run()


class _Runner:
    def __init__(
        self,
        tasks: TaskSet,
        settings: EvalSettings,
        run_file: RunFile,
        llms: LLMFactory,
        scratch: Path,
        index: DocumentIndex | None,
        on_record: Callable[[TaskRecord], None] | None,
    ) -> None:
        self.tasks = tasks
        self.settings = settings
        self.run_file = run_file
        self.llms = llms
        self.scratch = scratch
        self.index = index
        self.on_record = on_record

    async def run(self) -> list[TaskRecord]:
        self._check()
        _import_the_wire_paths()
        pending = self.pending()
        jobs = iter(pending)
        workers = min(self.settings.concurrency, len(pending))
        async with asyncio.TaskGroup() as group:
            for _ in range(workers):
                group.create_task(self._work(jobs))
        records = self.run_file.records
        return [
            records[(strategy.label, task.id)]
            for task in self.tasks.tasks
            for strategy in self.settings.strategies
        ]

    def pending(self) -> list[tuple[Strategy, AnyTask]]:
        """The pairs to run, task by task (each task's strategies side by side)."""
        done = self.run_file.records
        return [
            (strategy, task)
            for task in self.tasks.tasks
            for strategy in self.settings.strategies
            if not _finished(done.get((strategy.label, task.id)), self.settings.retry_failed)
        ]

    def _check(self) -> None:
        if self.settings.concurrency < 1:
            raise InvalidRequestError("the concurrency is at least 1")
        labels = [strategy.label for strategy in self.settings.strategies]
        if len(set(labels)) != len(labels) or not labels:
            raise InvalidRequestError(
                "give each --strategy once (or a label of its own: LABEL=AGENT)"
            )
        if "retrieval" in self.tasks.kinds() and self.index is None:
            raise InvalidRequestError("retrieval tasks need a document index")
        models = {s.label: self.settings.model_of(s) for s in self.settings.strategies}
        for record in self.run_file.records.values():
            if models.get(record.strategy, record.model) != record.model:
                raise RunFileError(
                    f"{self.run_file.path} holds results of {record.strategy!r} on model "
                    f"{record.model!r}, not {models[record.strategy]!r}: give another "
                    "--run-file, a label of its own, or --fresh"
                )

    async def _work(self, jobs: Iterator[tuple[Strategy, AnyTask]]) -> None:
        for strategy, task in jobs:
            record = await self._task(strategy, task)
            await self.run_file.append(record)
            if self.on_record is not None:
                self.on_record(record)

    async def _task(self, strategy: Strategy, task: AnyTask) -> TaskRecord:
        progress = _Progress()
        started = time.perf_counter()
        status: Literal["ok", "timeout", "error"] = "ok"
        error = None
        try:
            async with asyncio.timeout(self.settings.task_timeout):
                await self._play(strategy, task, progress)
        except TimeoutError:
            status, error = "timeout", f"no answer within {self.settings.task_timeout:g} s"
        except AgentloomError as exc:
            status, error = "error", exc.message
        return TaskRecord(
            strategy=strategy.label,
            agent=strategy.agent,
            model=self.settings.model_of(strategy),
            task_id=task.id,
            kind=task.type,
            status=status,
            score=progress.score if status == "ok" else _partial(task, progress),
            reply=progress.reply,
            expected=None if isinstance(task, SessionsTask) else task.answer,
            sessions=tuple(progress.sessions),
            usage=progress.usage,
            latency_s=round(time.perf_counter() - started, 3),
            tool_calls=progress.tool_calls,
            turns=progress.turns,
            evidence_recall=progress.evidence_recall,
            error=error,
        )

    async def _play(self, strategy: Strategy, task: AnyTask, progress: _Progress) -> None:
        folder = self.scratch / f"{_slug(strategy.label)}-{_slug(task.id)}-{uuid.uuid4().hex[:8]}"
        if isinstance(task, QATask):
            await self._qa(strategy, task, folder, progress)
        elif isinstance(task, RetrievalTask):
            await self._retrieval(strategy, task, folder, progress)
        else:
            await self._sessions(strategy, task, folder, progress)

    # --- the kinds -------------------------------------------------------------------------

    async def _qa(
        self, strategy: Strategy, task: QATask, folder: Path, progress: _Progress
    ) -> None:
        question = task.question
        if task.file:
            question += f"\n\nAttached file: {task.file} (read it with the file_read tool)."
        async with self._agent(strategy, "qa", folder, task.id) as (agent, context):
            progress.add(await agent.run(question, context))
        progress.score = score(task.scorer, progress.reply, task.answer)

    async def _retrieval(
        self, strategy: Strategy, task: RetrievalTask, folder: Path, progress: _Progress
    ) -> None:
        assert self.index is not None  # _check
        search = SearchDocumentsTool(self.index)
        async with self._agent(strategy, "retrieval", folder, task.id, (search,)) as (
            agent,
            context,
        ):
            progress.add(await agent.run(task.question, context))
        progress.score = score(task.scorer, progress.reply, task.answer)
        evidence = {Path(name).name for name in task.documents}
        if evidence:
            progress.evidence_recall = len(evidence & search.found) / len(evidence)

    async def _sessions(
        self, strategy: Strategy, task: SessionsTask, folder: Path, progress: _Progress
    ) -> None:
        history: list[Message] = []
        carry = self.settings.carry
        for number, session in enumerate(task.sessions):
            session_id = task.id if carry != "none" else f"{task.id}-{number}"
            started = time.perf_counter()
            async with self._agent(strategy, "sessions", folder, session_id) as (agent, context):
                resumes = isinstance(agent, OperativeAgent) or carry != "conversation"
                given = (
                    session.input
                    if resumes or not history
                    else [*history, Message.user(session.input)]
                )
                result = await agent.run(given, context)
            progress.add(result)
            history = _carried(history, session.input, result)
            progress.sessions.append(_outcome(task, number, result, time.perf_counter() - started))
        progress.score = _partial(task, progress)

    # --- building the agent ----------------------------------------------------------------

    @asynccontextmanager
    async def _agent(
        self,
        strategy: Strategy,
        kind: str,
        folder: Path,
        session_id: str,
        extra: Sequence[Tool] = (),
    ) -> AsyncIterator[tuple[BaseAgent, AgentContext]]:
        workspace = self.tasks.folder
        environment = ToolEnvironment(
            workspace=workspace,
            data_dir=folder,
            settings=self.settings.settings,
            session_id=session_id,
        )
        built = build_tools(self._tool_names(strategy, kind), environment)
        sessions = SessionStore.in_dir(folder)
        llm = self.llms(self.settings.model_of(strategy))
        try:
            agent = build_agent(
                strategy.agent,
                llm,
                [*built, *extra],
                self._options(strategy, kind, folder, sessions, session_id),
            )
            yield agent, AgentContext(session_id=session_id, workspace=workspace)
        finally:
            await _close(llm, built, sessions)

    def _tool_names(self, strategy: Strategy, kind: str) -> list[str]:
        names = list(strategy.tools if strategy.tools is not None else self.settings.tools)
        if kind == "sessions" and self.settings.carry == "memory":
            names += [name for name in MEMORY_TOOLS if name not in names]
        return names

    def _options(
        self, strategy: Strategy, kind: str, folder: Path, sessions: SessionStore, session_id: str
    ) -> AgentOptions:
        return AgentOptions(
            instructions=self.settings.instructions or INSTRUCTIONS[kind],
            max_turns=strategy.max_turns or self.settings.max_turns,
            data_dir=folder,
            strategies=strategy.axes,
            sessions=sessions,
            agent_name=f"eval-{session_id}",
        )


def _import_the_wire_paths() -> None:
    """Import now what an LLM's first call would (about 1.5 s), so that it does not count in
    the latency of the first tasks."""
    import agentloom.inference.openai_compatible
    import agentloom.llm.responses  # noqa: F401


async def _close(llm: LLM, tools: Sequence[Tool], sessions: SessionStore) -> None:
    try:
        await llm.aclose()
    finally:
        for tool in tools:
            await tool.aclose()
        await sessions.aclose()


def _finished(record: TaskRecord | None, retry_failed: bool) -> bool:
    return record is not None and (record.status == "ok" or not retry_failed)


def _carried(history: list[Message], said: str, result: AgentResult) -> list[Message]:
    """The conversation after a session: the run's messages (or, for a strategy that returns
    none, what was said and answered)."""
    if result.messages:
        return list(result.messages)
    return [*history, Message.user(said), Message.assistant(result.content)]


def _outcome(
    task: SessionsTask, number: int, result: AgentResult, seconds: float
) -> SessionOutcome:
    session = task.sessions[number]
    right = None if session.answer is None else score(task.scorer, result.content, session.answer)
    return SessionOutcome(
        input=session.input,
        reply=result.content,
        expected=session.answer,
        score=right,
        usage=_usage(result),
        latency_s=round(seconds, 3),
        tool_calls=len(result.tool_results),
    )


def _partial(task: AnyTask, progress: _Progress) -> float:
    """A sessions task's mean over all its scored sessions (unfinished ones count 0); 0 for a
    task of another kind that did not finish."""
    if not isinstance(task, SessionsTask):
        return 0.0
    scored = sum(1 for session in task.sessions if session.answer is not None)
    return sum(outcome.score or 0.0 for outcome in progress.sessions) / scored


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:40]
