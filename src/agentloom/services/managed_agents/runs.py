"""Runs of managed agents: durable jobs, run by any server process, followed from any.

``POST .../run`` stores a run (``queued``) and its job together, unless the agent has one queued
or going already (a 409). A tick of the agent's schedule is a job of kind :data:`TICK_JOB`; its
run is made when it starts. A run takes the agent's queued messages (those it took before, if it
runs again), runs the agent over them (or, with none, over its ``task``) and stores each frame
of its stream (:mod:`agentloom.services.managed_agents.stream`) as it goes, so that ``follow``
replays
them and then the live ones, from any process, until ``[DONE]``. Its reply is stored when it
ends, with how it ended: a failing run (the backend down, its model gone) is ``failed``, its
error recorded, and the schedule's next tick runs as planned.

Only one run of an agent is in progress at a time: a run due while another goes waits (its job
is tried again a moment later). A run whose process stopped runs again from the start in
another (its events cleared), unless a tool with effects outside the agent had run
(code_interpreter, an MCP server's tool ...): then it is failed rather than run twice.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing

import anyio

from agentloom.api.managed_agents import AgentRun, ManagedAgentConfig, RunError, RunTrigger
from agentloom.errors import AgentloomError, ConflictError, NotFoundError
from agentloom.ids import new_id
from agentloom.services.jobs.event_writer import EventWriter
from agentloom.services.jobs.wakeups import Wakeups
from agentloom.services.managed_agents.factory import AgentFactory
from agentloom.services.managed_agents.service import TICK_JOB, ManagedAgentsService, config_of
from agentloom.services.managed_agents.stream import DONE, Frame, TurnStream, turn_frames
from agentloom.services.managed_agents.wire import run_wire
from agentloom.storage.agent_runs import SETTLED, Begun, RunRow, SqlAgentRunStore
from agentloom.storage.base import Order
from agentloom.storage.events import SqlEventStore, StoredEvent
from agentloom.storage.jobs import JobRow, SqlJobStore
from agentloom.storage.managed_agents import AgentRow, SqlManagedAgentStore, TurnEnd
from agentloom.storage.scoped import acting_owner
from agentloom.tenancy import current_key, current_project

__all__ = ["RUN_JOB", "TICK_JOB", "AgentRuns"]

RUN_JOB = "agent_run"  # the kind of a run's job (its subject: the run's id)
BUSY_RETRY = 1.0  # seconds before a run due while another goes is tried again
RECHECK_AFTER = 1.0  # seconds a follower waits for a wake-up before it reads again anyway
ENDED_GRACE = 5.0  # seconds a follower waits for the last frames of an ended run
STOP_WAIT = 5.0  # seconds a cancel waits for the run's process to stop it
TICK_PROMPT = "No new messages. Carry on with your task."
# Tools whose calls change nothing outside the agent: a run that used only these may run again.
REPEATABLE_TOOLS = frozenset({"calculator", "think", "file_read", "memory_search", "web_search"})


class AgentRuns:
    """Runs (``start``, ``list``, ``get``, ``follow``) and the
    :class:`~agentloom.services.jobs.runner.JobHandler` of kinds :data:`RUN_JOB` and
    :data:`TICK_JOB`."""

    def __init__(
        self,
        agents: ManagedAgentsService,
        store: SqlManagedAgentStore,
        runs: SqlAgentRunStore,
        jobs: SqlJobStore,
        events: SqlEventStore,
        factory: AgentFactory,
        wakeups: Wakeups,
        *,
        nudge: Callable[[], None],
        stop: Callable[[str], None],
        instance_id: str,
        history: int,
    ) -> None:
        """``nudge``: this process's job runner, told a job is queued; ``stop``: told to stop
        the job of a subject if it runs here."""
        self._agents = agents
        self._store = store
        self._runs = runs
        self._jobs = jobs
        self._events = events
        self._factory = factory
        self._wakeups = wakeups
        self._nudge = nudge
        self._stop_here = stop
        self._instance = instance_id
        self._history = history

    # --- the API -----------------------------------------------------------------------------

    async def start(self, agent_id: str, trigger: RunTrigger = "manual") -> AgentRun:
        """Queue a run of the agent; a 409 when it has one queued or in progress."""
        await self._agents.stored(agent_id, "update")
        now = time.time()
        run = RunRow(new_id("arun"), agent_id, "queued", trigger, now)
        job = JobRow(
            id=new_id("job"),
            project_id=current_project(),
            kind=RUN_JOB,
            subject=run.id,
            key_id=current_key(),
            owner=acting_owner(),
            payload="{}",
            created_at=now,
        )
        if await self._runs.queue(run, job) is None:
            raise ConflictError(
                f"The managed agent '{agent_id}' has a run queued or in progress; its queued "
                "messages are taken by that run or the next one.",
                param="managed_agent_id",
                code="agent_busy",
            )
        self._nudge()
        return run_wire(run)

    async def page(
        self, agent_id: str, after: str | None, limit: int, order: Order
    ) -> tuple[list[AgentRun], bool]:
        await self._agents.stored(agent_id)
        page = await self._runs.page(agent_id, after, limit, order)
        if page is None:
            raise NotFoundError(f"No run found with id '{after}'.", param="after")
        return [run_wire(row) for row in page.data], page.has_more

    async def get(self, agent_id: str, run_id: str) -> AgentRun:
        return run_wire(await self._row(agent_id, run_id))

    async def cancel(self, agent_id: str, run_id: str) -> AgentRun:
        """Stop a queued or running run (ended ``cancelled``, its stream ended); an ended one is
        returned as it is."""
        await self._agents.stored(agent_id, "update")
        run = await self._row(agent_id, run_id)
        if run.status in SETTLED:
            return run_wire(run)
        if run.trigger == "schedule":  # a tick's job: one of the agent's, named after the run
            job = await self._jobs.request_cancel_job("job_" + run.id.removeprefix("arun_"))
        else:
            job = await self._jobs.request_cancel(run.id)
        if job is not None and job.status == "cancelled":  # it never started
            await self._settle(job, "cancelled", None)
        elif job is not None:
            self._stop_here(job.subject)  # if it runs in this process (else: notified, or polled)
            await self._stopped(run.id)
        return run_wire(await self._row(agent_id, run_id))

    async def _stopped(self, run_id: str) -> None:
        """Wait (a few seconds at most) for the run's process to stop it."""
        with anyio.move_on_after(STOP_WAIT):
            while True:
                with self._wakeups.waiting(run_id) as woken:
                    found = await self._runs.find(run_id)
                    if found is None or found.status in SETTLED:
                        return
                    with anyio.move_on_after(RECHECK_AFTER):
                        await woken.wait()

    async def _row(self, agent_id: str, run_id: str) -> RunRow:
        row = await self._runs.get(agent_id, run_id)
        if row is None:
            raise NotFoundError(f"No run found with id '{run_id}'.", param="run_id")
        return row

    async def follow(
        self, agent_id: str, run_id: str, after: int = -1
    ) -> AsyncGenerator[Frame, None]:
        """The run's frames after ``after`` (a frame's number: its place in the stream), then
        the live ones until ``[DONE]``."""
        await self._row(agent_id, run_id)
        last, ended_at = after, None
        while True:
            with self._wakeups.waiting(run_id) as woken:
                events = await self._events.after(run_id, last)
                for event in events:
                    last = event.sequence_number
                    yield Frame(event.type, event.body)
                if any(event.body == DONE.data for event in events):
                    return
                if not events:
                    run = await self._runs.find(run_id)
                    if run is None:
                        return  # deleted with its agent
                    if run.status in SETTLED:  # its last frames follow its row: wait a little
                        ended_at = ended_at or time.monotonic()
                        if time.monotonic() - ended_at > ENDED_GRACE:
                            return
                    with anyio.move_on_after(RECHECK_AFTER):
                        await woken.wait()

    # --- the job handler ---------------------------------------------------------------------

    async def run(self, job: JobRow) -> float | None:
        run = await self._run_of(job)
        if run is None or run.status in SETTLED:
            return None  # its agent is gone, or it ended before its process stopped
        if job.attempts > 1:
            await self._events.clear(run.id)  # it starts afresh
        begun = await self._runs.begin(run, time.time(), self._history)
        if begun is None:
            return time.time() + BUSY_RETRY  # another run of the agent goes
        agent = await self._store.row(run.agent_id)
        if agent is not None:
            await self._execute(job, begun, agent)
        return None

    async def _run_of(self, job: JobRow) -> RunRow | None:
        """The job's run: stored, or (a tick's first start) made now."""
        found = await self._runs.find(_run_id(job))
        if found is not None or job.kind == RUN_JOB:
            return found
        if await self._store.row(job.subject) is None:
            return None
        return RunRow(_run_id(job), job.subject, "queued", "schedule", time.time())

    async def _execute(self, job: JobRow, begun: Begun, agent: AgentRow) -> None:
        run, taken = begun.run, begun.taken
        config = config_of(agent)
        turn = TurnStream(config.model or "")
        writer = EventWriter(self._events, self._wakeups.wake, run.id)
        try:
            built = await self._factory.build(agent.id, agent.agent_type, config)
        except AgentloomError as exc:
            failure = turn.failed(exc)[:-1]
            await _write(writer, failure)
            await self._end(agent, run, turn)
            await writer.add(_stored(len(failure), DONE), last=True)
            return
        turn.model = built.model
        texts = [message.content for message in taken.messages] or [_tick_text(config)]
        marked = False
        number = 0
        try:
            frames = turn_frames(built, turn, built.input(taken.history, texts))
            async with aclosing(frames):
                async for frame in frames:
                    if frame is DONE:
                        break  # written once the run's end is stored
                    if not marked and turn.tools_used - REPEATABLE_TOOLS:
                        await self._jobs.mark_irreversible(job.id, self._instance)
                        marked = True
                    await writer.add(_stored(number, frame))
                    number += 1
        finally:
            with anyio.CancelScope(shield=True):
                await writer.flush()
                await built.aclose()
        await self._end(agent, run, turn)
        await writer.add(_stored(number, DONE), last=True)

    async def _end(self, agent: AgentRow, run: RunRow, turn: TurnStream) -> None:
        failed = turn.error is not None
        end = TurnEnd(
            reply=turn.reply(agent.id, run.id),
            input_tokens=turn.usage.input_tokens,
            output_tokens=turn.usage.output_tokens,
            at=time.time(),
            status="error" if failed else "idle",
            run_id=run.id,
            run_status="failed" if failed else "completed",
            run_error=None if turn.error is None else turn.error.model_dump_json(),
        )
        with anyio.CancelScope(shield=True):
            await self._store.end_turn(agent.id, end)
        self._wakeups.wake(run.id)

    async def stopped(self, job: JobRow) -> None:
        """Stopped while it ran: ended ``cancelled`` (its frames end the stream)."""
        await self._settle(job, "cancelled", None)

    async def requeued(self, job: JobRow) -> None:
        """Back to the queue (its process stops): queued again, its frames forgotten."""
        run = await self._runs.find(_run_id(job))
        if run is None or run.status in SETTLED:
            return
        await self._runs.update(run.id, {"status": "queued", "started_at": None})
        await self._events.clear(run.id)
        await self._store.update(run.agent_id, {"status": "idle"})

    async def abandoned(self, job: JobRow, message: str) -> None:
        await self._settle(job, "failed", RunError(code="server_error", message=message))

    async def _settle(self, job: JobRow, status: str, error: RunError | None) -> None:
        run = await self._runs.find(_run_id(job))
        if run is None or run.status in SETTLED:
            return  # gone, ended already, or a tick that never began
        values = {
            "status": status,
            "ended_at": time.time(),
            "error": None if error is None else error.model_dump_json(),
        }
        await self._runs.update(run.id, values)
        await self._store.update(run.agent_id, {"status": "error" if error else "idle"})
        done = await self._events.after(run.id, -1, limit=100_000)
        frames = [] if error is None else [_error_frame(error)]
        writer = EventWriter(self._events, self._wakeups.wake, run.id)
        await _write(writer, [*frames, DONE], start=len(done))


def _run_id(job: JobRow) -> str:
    """A run's job names it; a tick's run is named after its job."""
    return job.subject if job.kind == RUN_JOB else "arun_" + job.id.removeprefix("job_")


def _tick_text(config: ManagedAgentConfig) -> str:
    return config.task or TICK_PROMPT


def _stored(number: int, frame: Frame) -> StoredEvent:
    return StoredEvent(number, frame.event, frame.data)


async def _write(writer: EventWriter, frames: list[Frame], start: int = 0) -> None:
    for number, frame in enumerate(frames, start):
        await writer.add(_stored(number, frame))
    await writer.flush()


def _error_frame(error: RunError) -> Frame:
    kind = "server_error"
    body = {"error": {"message": error.message, "type": kind, "param": None, "code": error.code}}
    return Frame("", json.dumps(body))
