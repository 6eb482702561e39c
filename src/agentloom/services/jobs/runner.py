"""The job runner: each server process claims queued jobs and runs them, with leases.

What a job does depends on its ``kind``: a :class:`JobHandler` per kind, registered with
:meth:`JobRunner.handle` (background responses, webhook deliveries ...). Each kind has its own pool
of slots in the process (``[jobs.pools]``, else ``[jobs] concurrency``), so that jobs of one kind
that never end do not keep the others waiting. The runner knows only jobs: it claims one of a kind
with a free slot whenever there is one (woken when this process queues a job or one of its jobs
ends, by a PostgreSQL notification when another process queues one, else every second), the
storage choosing fairly between projects (:meth:`SqlJobStore.claim`), and runs it beside the
others. A job runs as the project and key that queued it. A maintenance task renews this
process's leases, stops jobs whose cancellation was asked for (in any process), and takes over
jobs whose lease ran out (their process died): run again from the start, or abandoned once they
have been tried ``max_attempts`` times or did something that must not happen twice. On shutdown
the process stops claiming, lets running jobs finish within ``drain_seconds``, and hands the
others back to the queue. The same task queues the jobs of due schedules
(:mod:`agentloom.storage.schedules`).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

import anyio
from anyio.abc import TaskGroup

from agentloom.access_rules import Viewer
from agentloom.config import JobSettings
from agentloom.storage.connection_faults import DATABASE_FAULTS
from agentloom.storage.jobs import JobRow, SqlJobStore
from agentloom.storage.schedules import SqlScheduleStore
from agentloom.tenancy import Policy, acting_for
from agentloom.tracing import active

log = logging.getLogger(__name__)


class JobHandler(Protocol):
    """What jobs of one kind do. Each method runs as the job's project."""

    async def run(self, job: JobRow) -> float | None:
        """Do the job: ``None`` when it is done, else the time to run it again from (a retry
        with backoff). Cancelling the job cancels this."""
        ...

    async def stopped(self, job: JobRow) -> None:
        """The job was cancelled while it ran: record that it ended so."""
        ...

    async def requeued(self, job: JobRow) -> None:
        """The job goes back to the queue (its process stopped): undo what a run half did."""
        ...

    async def abandoned(self, job: JobRow, message: str) -> None:
        """The job will not run again (``message`` says why): record its failure."""
        ...


@dataclass
class _Running:
    job: JobRow
    scope: anyio.CancelScope
    handing_back: bool = False  # the process is stopping
    lost: bool = False  # another process took the job over
    done: anyio.Event = field(default_factory=anyio.Event)


class JobRunner:
    def __init__(
        self,
        jobs: SqlJobStore,
        *,
        instance_id: str,
        settings: JobSettings,
        policy: Callable[[str], Awaitable[Policy]],
        schedules: SqlScheduleStore | None = None,
    ) -> None:
        """``schedules``: fired by this runner's maintenance (about once a second)."""
        self._jobs = jobs
        self._schedules = schedules
        self._instance = instance_id
        self._settings = settings
        self._policy = policy
        self._handlers: dict[str, JobHandler] = {}
        self._limits: dict[str, int] = {}  # jobs of a kind run here at once, at most
        self._running: dict[str, _Running] = {}  # by job id
        self._queued = anyio.Event()
        self._stopping = False

    @property
    def instance_id(self) -> str:
        return self._instance

    def handle(self, kind: str, handler: JobHandler, *, limit: int | None = None) -> None:
        """Run jobs of ``kind`` with ``handler``, as many at once in this process as its pool
        (``[jobs.pools]``; else ``limit``, the kind's own setting; else ``[jobs] concurrency``).
        The others wait in the queue."""
        self._handlers[kind] = handler
        self._limits[kind] = self._settings.pool(kind, limit)

    @property
    def pools(self) -> dict[str, int]:
        """The kinds this runner runs, and how many jobs of each at once."""
        return dict(self._limits)

    async def run(self) -> None:
        """Run jobs until cancelled (the server's task group)."""
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._maintain)
            await self._dispatch(tasks)

    def released(self, job_id: str) -> bool:
        """Whether the job running here is let go: handed back (the process is stopping) or
        taken over by another process. Its run then settles nothing: the job is not over."""
        running = self._running.get(job_id)
        return running is not None and (running.handing_back or running.lost)

    def nudge(self, _payload: str = "") -> None:
        """A job was queued (here, or in another process: a notification)."""
        self._queued.set()

    def stop(self, subject: str) -> None:
        """Stop the job of ``subject`` if it runs here (its cancellation was asked for)."""
        for running in list(self._running.values()):
            if subject and running.job.subject == subject:
                running.scope.cancel()

    async def drain(self) -> None:
        """Stop claiming; give running jobs ``drain_seconds`` to finish; hand back the rest."""
        self._stopping = True
        self._queued.set()
        with anyio.move_on_after(self._settings.drain_seconds):
            for running in list(self._running.values()):
                await running.done.wait()
        for running in list(self._running.values()):
            running.handing_back = True
            running.scope.cancel()
            await running.done.wait()

    # --- claiming and running ----------------------------------------------------------------

    async def _dispatch(self, tasks: TaskGroup) -> None:
        """Claim jobs while a kind has a free slot and the queue has one of it; run each in
        ``tasks``. One claim at a time, so that the pools hold exactly."""
        while not self._stopping:
            self._queued = anyio.Event()  # what happens from here on wakes the next wait
            job = await self._claim()
            if job is None:
                with anyio.move_on_after(self._settings.poll_seconds):
                    await self._queued.wait()
                continue
            tasks.start_soon(self._run, job)

    async def _claim(self) -> JobRow | None:
        free = [kind for kind, limit in self._limits.items() if self._count(kind) < limit]
        if not free:
            return None
        try:
            job = await self._jobs.claim(
                self._instance, now=time.time(), lease=self._settings.lease_seconds, kinds=free
            )
        except DATABASE_FAULTS:
            log.warning("could not claim a job; retrying", exc_info=True)
            return None
        if job is not None:  # counted before the next claim
            self._running[job.id] = _Running(job, anyio.CancelScope())
        return job

    def _count(self, kind: str) -> int:
        return sum(1 for running in self._running.values() if running.job.kind == kind)

    async def _run(self, job: JobRow) -> None:
        tracing = active()
        if tracing is None:
            await self._run_job(job)
            return
        attributes = {
            "agentloom.job.id": job.id,
            "agentloom.job.kind": job.kind,
            "agentloom.job.subject": job.subject,
        }
        with tracing.span(f"job {job.kind}", attributes):
            await self._run_job(job)

    async def _acting(self, job: JobRow) -> tuple[str, Policy]:
        """The job's project, under its policy without access rules (background work)."""
        policy = await self._policy(job.project_id)
        if policy.access is not None:
            policy = dataclasses.replace(policy, access=None)
        return job.project_id, policy

    async def _run_job(self, job: JobRow) -> None:
        handler = self._handlers.get(job.kind)
        running = self._running[job.id]
        try:
            with acting_for(*await self._acting(job), key_id=job.key_id, viewer=_owner(job)):
                if handler is None:
                    raise LookupError(f"no handler for jobs of kind {job.kind!r}")
                again: float | None = None
                with running.scope:
                    again = await handler.run(job)
                await self._ended(job, handler, running, again)
        except Exception:
            log.exception("job %s (%s) failed", job.id, job.kind)
            await self._give_up(job, handler)
        finally:
            self._running.pop(job.id, None)
            running.done.set()
            self._queued.set()  # a slot is free

    async def _give_up(self, job: JobRow, handler: JobHandler | None) -> None:
        """Settle a job whose run failed. If the database fails this too, the job is left to
        its lease: no longer renewed, it expires and is taken over (here or elsewhere)."""
        with anyio.CancelScope(shield=True), acting_for(job.project_id):
            try:
                if handler is not None:
                    await handler.abandoned(job, "The server failed while running this job.")
                await self._jobs.finish(job.id, self._instance)
            except DATABASE_FAULTS:
                log.warning("could not settle job %s; its lease will expire", job.id, exc_info=True)

    async def _ended(
        self, job: JobRow, handler: JobHandler, running: _Running, again: float | None
    ) -> None:
        with anyio.CancelScope(shield=True):
            if running.lost:
                return  # another process runs it now
            if running.handing_back:
                await handler.requeued(job)
                await self._jobs.hand_back(job.id, self._instance)
                return
            if running.scope.cancel_called:
                await handler.stopped(job)
            elif again is not None:
                await self._jobs.retry_later(job.id, self._instance, again)
                return
            await self._jobs.finish(job.id, self._instance)

    # --- maintenance -------------------------------------------------------------------------

    async def _maintain(self) -> None:
        """Renew leases, stop cancelled jobs, take over expired ones, fire due schedules."""
        every = self._settings.lease_seconds / 3
        while True:
            try:
                await self._renew()
                for subject in await self._jobs.cancelled(self._instance):
                    self.stop(subject)
                await self._take_over()
                if self._schedules is not None and await self._schedules.fire(time.time()):
                    self._queued.set()
            except DATABASE_FAULTS:
                log.warning("job maintenance failed; retrying", exc_info=True)
            await anyio.sleep(min(every, self._settings.poll_seconds))

    async def _renew(self) -> None:
        mine = list(self._running.values())  # jobs claimed meanwhile are not judged here
        until = time.time() + self._settings.lease_seconds
        held = await self._jobs.renew(self._instance, [r.job.id for r in mine], until)
        for running in mine:
            if running.job.id not in held and not running.done.is_set():
                running.lost = True
                running.scope.cancel()  # taken over by another process: stop here

    async def _take_over(self) -> None:
        now = time.time()
        for job in await self._jobs.expired(now):
            handler = self._handlers.get(job.kind)
            if handler is None:
                continue  # a kind this process does not run (an older or newer server)
            with acting_for(job.project_id):
                if job.irreversible or job.attempts >= self._settings.max_attempts:
                    if await self._jobs.settle(job.id, lease_before=now):
                        await handler.abandoned(job, _why_not_again(job))
                elif await self._jobs.requeue(job.id, lease_before=now):
                    await handler.requeued(job)
                    self._queued.set()


def _owner(job: JobRow) -> Viewer | None:
    """Who the job works for: the objects it makes are theirs (its project's access rules are
    not applied to background work, which reaches every object of its project)."""
    return None if job.owner is None else Viewer(job.owner)


def _why_not_again(job: JobRow) -> str:
    if job.irreversible:
        return (
            "The server running this response stopped after a tool with side effects "
            "(code_interpreter, MCP) had run; it was not run again, so that the tool does not "
            "run twice."
        )
    return f"The server running this job stopped {job.attempts} times; it was not tried again."
