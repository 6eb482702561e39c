"""The job runner: each server process claims queued jobs and runs them, with leases.

``concurrency`` workers claim jobs (woken when this process queues one, by a PostgreSQL
notification when another does, else every second). A job runs as the project and key that
queued it. A maintenance task renews this process's leases, stops jobs whose cancellation was
asked for (in any process), and takes over jobs whose lease ran out (their process died): run
again from the start, or failed once they have been tried ``max_attempts`` times. On shutdown
the process stops claiming, lets running jobs finish within ``drain_seconds``, and hands the
others back to the queue.

A background response's events are written in small batches (at most every 20 ms, and at its
end), so a follower in any process sees them within milliseconds without a write per token.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio
from sqlalchemy.exc import DBAPIError

from agentloom.api import events as ev
from agentloom.api.requests import CreateResponseRequest
from agentloom.api.response import ResponseError
from agentloom.config import JobSettings
from agentloom.engine.persist import response_row
from agentloom.engine.service import ResponsesService
from agentloom.errors import AgentloomError
from agentloom.services.background import SETTLED, TERMINAL_EVENTS, BackgroundResponses
from agentloom.storage.events import SqlEventStore, StoredEvent
from agentloom.storage.jobs import JobRow, SqlJobStore
from agentloom.tenancy import Policy, acting_for

log = logging.getLogger(__name__)

BATCH_DELAY = 0.02  # seconds an event waits for others to be written with it
# The first event of a tool call with effects outside the response: once seen, a takeover
# fails the job rather than running it (and the tool) again.
SIDE_EFFECTS = frozenset(
    {"response.code_interpreter_call.in_progress", "response.mcp_call.in_progress"}
)
CLAIM_POLL = 1.0  # seconds between claims when nothing wakes the workers


@dataclass
class _Running:
    job: JobRow
    scope: anyio.CancelScope
    handing_back: bool = False
    done: anyio.Event = field(default_factory=anyio.Event)


class JobRunner:
    def __init__(
        self,
        background: BackgroundResponses,
        responses: ResponsesService,
        jobs: SqlJobStore,
        events: SqlEventStore,
        *,
        instance_id: str,
        settings: JobSettings,
        policy: Callable[[str], Awaitable[Policy]],
    ) -> None:
        self._background = background
        self._responses = responses
        self._jobs = jobs
        self._events = events
        self._instance = instance_id
        self._settings = settings
        self._policy = policy
        self._running: dict[str, _Running] = {}  # by subject
        self._stopping = False

    async def run(self) -> None:
        """Run jobs until cancelled (the server's task group)."""
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._maintain)
            for _ in range(self._settings.concurrency):
                tasks.start_soon(self._work)

    def nudge(self, _payload: str = "") -> None:
        """A job was queued (by another process: a notification)."""
        self._background.queued.set()

    def stop(self, subject: str) -> None:
        """Stop the job of ``subject`` if it runs here (its cancellation was asked for)."""
        running = self._running.get(subject) if subject else None
        if running is not None:
            running.scope.cancel()

    async def drain(self) -> None:
        """Stop claiming; give running jobs ``drain_seconds`` to finish; hand back the rest."""
        self._stopping = True
        self._background.queued.set()
        with anyio.move_on_after(self._settings.drain_seconds):
            for running in list(self._running.values()):
                await running.done.wait()
        for running in list(self._running.values()):
            running.handing_back = True
            running.scope.cancel()
            await running.done.wait()

    # --- workers ---------------------------------------------------------------------------

    async def _work(self) -> None:
        while not self._stopping:
            try:
                job = await self._jobs.claim(
                    self._instance, now=time.time(), lease=self._settings.lease_seconds
                )
            except (DBAPIError, OSError):
                log.warning("could not claim a job; retrying", exc_info=True)
                job = None
            if job is None:
                await self._idle()
                continue
            await self._run(job)

    async def _idle(self) -> None:
        queued = self._background.queued
        with anyio.move_on_after(CLAIM_POLL):
            await queued.wait()
        if queued.is_set():
            self._background.queued = anyio.Event()

    async def _run(self, job: JobRow) -> None:
        running = _Running(job, anyio.CancelScope())
        self._running[job.subject] = running
        try:
            with acting_for(job.project_id, await self._policy(job.project_id), key_id=job.key_id):
                with running.scope:
                    await self._respond(job)
                if running.handing_back:
                    await self._hand_back(job)
                    return
                if running.scope.cancel_called:
                    await self._cancelled(job)
            await self._jobs.finish(job.id, self._instance)
        except Exception:
            log.exception("background job %s failed", job.id)
            with anyio.CancelScope(shield=True), acting_for(job.project_id):
                await self._fail(job, "The server failed while running this response.")
                await self._jobs.finish(job.id, self._instance)
        finally:
            self._running.pop(job.subject, None)
            running.done.set()

    async def _respond(self, job: JobRow) -> None:
        payload = json.loads(job.payload)
        request = CreateResponseRequest.model_validate(payload["request"])
        identity = (job.subject, int(payload["created_at"]))
        await self._events.clear(job.subject)  # a run taken over starts afresh
        try:
            prepared = await self._responses.prepare(request, identity=identity)
        except AgentloomError as exc:  # what it refers to changed since it was queued
            await self._fail(job, exc.stated())
            return
        writer = _EventWriter(self._events, self._background, job.subject)
        marked = False
        try:
            async for event in self._responses.stream(prepared):
                if not marked and event.type in SIDE_EFFECTS:
                    await self._jobs.mark_irreversible(job.id, self._instance)
                    marked = True
                await writer.add(event)
        finally:
            with anyio.CancelScope(shield=True):
                await writer.flush()

    # --- maintenance -------------------------------------------------------------------------

    async def _maintain(self) -> None:
        """Renew leases, stop cancelled jobs, take over expired ones."""
        every = self._settings.lease_seconds / 3
        while True:
            try:
                await self._renew()
                for subject in await self._jobs.cancelled(self._instance):
                    self.stop(subject)
                await self._take_over()
            except (DBAPIError, OSError):
                log.warning("job maintenance failed; retrying", exc_info=True)
            await anyio.sleep(min(every, CLAIM_POLL))

    async def _renew(self) -> None:
        mine = list(self._running.values())  # jobs claimed meanwhile are not judged here
        until = time.time() + self._settings.lease_seconds
        held = await self._jobs.renew(self._instance, [r.job.id for r in mine], until)
        for running in mine:
            if running.job.id not in held and not running.done.is_set():
                running.scope.cancel()  # taken over by another process: stop here

    async def _take_over(self) -> None:
        now = time.time()
        for job in await self._jobs.expired(now):
            with acting_for(job.project_id):
                if job.irreversible or job.attempts >= self._settings.max_attempts:
                    if await self._jobs.settle(job.id, lease_before=now):
                        await self._fail(job, _why_not_again(job))
                elif await self._jobs.requeue(job.id, lease_before=now):
                    await self._requeued(job)
                    self._background.queued.set()

    async def _cancelled(self, job: JobRow) -> None:
        """A job stopped before its response recorded an end (cancelled as it started)."""
        with anyio.CancelScope(shield=True):
            response = await self._responses.get(job.subject)
            if response.status not in SETTLED:
                cancelled = response.model_copy(update={"status": "cancelled"})
                await self._responses.reset(response_row(cancelled))
            self._background.wakeups.wake(job.subject)

    async def _hand_back(self, job: JobRow) -> None:
        with anyio.CancelScope(shield=True):
            await self._requeued(job)
            await self._jobs.hand_back(job.id, self._instance)

    async def _requeued(self, job: JobRow) -> None:
        """The response as it was queued: no output, no events (it runs again)."""
        response = await self._responses.get(job.subject)
        queued = response.model_copy(update={"status": "queued", "output": [], "usage": None})
        await self._responses.reset(response_row(queued))
        await self._events.clear(job.subject)

    async def _fail(self, job: JobRow, message: str) -> None:
        response = await self._responses.get(job.subject)
        error = ResponseError(code="server_error", message=message)
        failed = response.model_copy(update={"status": "failed", "error": error})
        await self._responses.reset(response_row(failed))
        await self._events.clear(job.subject)
        terminal = ev.ResponseFailed(sequence_number=0, response=failed)
        await self._events.append(
            job.subject, [StoredEvent(0, terminal.type, terminal.model_dump_json())]
        )
        self._background.wakeups.wake(job.subject)


def _why_not_again(job: JobRow) -> str:
    if job.irreversible:
        return (
            "The server running this response stopped after a tool with side effects "
            "(code_interpreter, MCP) had run; it was not run again, so that the tool does not "
            "run twice."
        )
    return f"The server running this response stopped {job.attempts} times; it was not tried again."


class _EventWriter:
    """A background response's events, written in batches (see the module's docstring)."""

    def __init__(
        self, events: SqlEventStore, background: BackgroundResponses, subject: str
    ) -> None:
        self._events = events
        self._background = background
        self._subject = subject
        self._pending: list[StoredEvent] = []
        self._timer: asyncio.Task[None] | None = None
        self._writing = asyncio.Lock()  # batches are written in order

    async def add(self, event: ev.StreamEvent) -> None:
        body = event.model_dump_json()
        self._pending.append(StoredEvent(event.sequence_number, event.type, body))
        if event.type in TERMINAL_EVENTS:
            await self.flush()
        elif self._timer is None:
            self._timer = asyncio.ensure_future(self._later())

    async def _later(self) -> None:
        await asyncio.sleep(BATCH_DELAY)
        self._timer = None
        await self.flush()

    async def flush(self) -> None:
        if self._timer is not None and self._timer is not asyncio.current_task():
            self._timer.cancel()
            self._timer = None
        async with self._writing:
            pending, self._pending = self._pending, []
            if pending:
                await self._events.append(self._subject, pending)
                self._background.wakeups.wake(self._subject)
