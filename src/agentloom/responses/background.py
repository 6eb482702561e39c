"""Background responses: queued as durable jobs, run by any server process, followed from any.

``create`` validates the request as a foreground create would (every mistake is a 400 before
anything is stored), then writes the response (``queued``) and its job in one transaction. A
:class:`~agentloom.services.jobs.runner.JobRunner` in some process runs it
(:mod:`agentloom.responses.jobs`); every event it makes is stored
(:mod:`agentloom.storage.events`). ``follow`` replays a response's stored events after a
``sequence_number`` and then the live ones as they are written, woken in-process or by
PostgreSQL notifications, until the terminal event. ``cancel`` stops it wherever it runs.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import anyio

from agentloom.api.requests import CreateResponseRequest
from agentloom.api.response import Response
from agentloom.errors import InvalidRequestError, NotFoundError, RateLimitedError
from agentloom.ids import new_id
from agentloom.responses.persist import response_row
from agentloom.responses.service import ResponsesService
from agentloom.services.jobs.wakeups import Wakeups
from agentloom.storage.base import ResponseStore
from agentloom.storage.events import TERMINAL_EVENTS, SqlEventStore, StoredEvent
from agentloom.storage.jobs import JobRow, SqlJobStore
from agentloom.storage.scoped import acting_owner
from agentloom.tenancy import current_key, current_project

__all__ = ["TERMINAL_EVENTS", "BackgroundResponses"]

SETTLED = frozenset({"completed", "failed", "incomplete", "cancelled"})
RECHECK_AFTER = 1.0  # seconds a follower waits for a wake-up before it reads again anyway
TERMINAL_GRACE = 5.0  # seconds a follower waits for the terminal event of an ended response
DEPTH_TTL = 0.25  # seconds a count of the waiting responses is used for

RESPONSE_JOB = "response"  # the kind of a background response's job


class BackgroundResponses:
    def __init__(
        self,
        responses: ResponsesService,
        store: ResponseStore,
        jobs: SqlJobStore,
        events: SqlEventStore,
        wakeups: Wakeups,
        *,
        max_queued: int,
        nudge: Callable[[], None],
        announce: Callable[[Response], Awaitable[None]],
        stop_here: Callable[[str], None] = lambda _subject: None,
    ) -> None:
        """``nudge``: this process's job runner has work; ``announce``: a background response
        ended (its webhooks are sent); ``stop_here``: stop the job of a response if this
        process's runner runs it."""
        self._responses = responses
        self._store = store
        self._jobs = jobs
        self._events = events
        self.wakeups = wakeups
        self._max_queued = max_queued
        self._nudge = nudge
        self._announce = announce
        self._depth = 0  # responses waiting, as last counted (see _room)
        self._counted_at = -DEPTH_TTL
        self._stop_here = stop_here

    async def create(self, request: CreateResponseRequest) -> Response:
        """Validate, then store the response ``queued`` with its job; returns it at once."""
        prepared = await self._responses.prepare(request)
        await self._responses.discard(prepared)  # the run prepares (and holds) again
        await self._room()
        response = prepared.response.model_copy(update={"status": "queued"})
        job = JobRow(
            id=new_id("job"),
            project_id=current_project(),
            kind=RESPONSE_JOB,
            subject=response.id,
            key_id=current_key(),
            owner=acting_owner(),
            payload=json.dumps(
                {"request": request.model_dump(mode="json"), "created_at": response.created_at}
            ),
            created_at=time.time(),
        )
        await self._jobs.enqueue_response(response_row(response), job)
        self._nudge()
        return response

    async def _room(self) -> None:
        """Refuse a create when ``max_queued`` responses are waiting. The count is read at most
        every quarter second (plus this process's creates since): a refusal is always checked
        against a fresh count."""
        now = time.monotonic()
        if now - self._counted_at > DEPTH_TTL or self._depth >= self._max_queued:
            self._depth = await self._jobs.depth(RESPONSE_JOB)
            self._counted_at = now
        if self._depth >= self._max_queued:
            raise RateLimitedError(
                f"The background queue is full ({self._depth} responses waiting).",
                retry_after=1.0,
            )
        self._depth += 1

    async def settled(self, response: Response) -> None:
        """A background response ended (however): wake its followers here, announce it."""
        self.wakeups.wake(response.id)
        await self._announce(response)

    async def follow(self, response_id: str, after: int = -1) -> AsyncIterator[StoredEvent]:
        """The response's events after ``after``, then the live ones until it ends."""
        await self._background(response_id)
        last = after
        ended_at: float | None = None  # when the row said it had ended, no terminal event seen
        while True:
            with self.wakeups.waiting(response_id) as woken:
                events = await self._events.after(response_id, last)
                for event in events:
                    last = event.sequence_number
                    yield event
                if any(event.type in TERMINAL_EVENTS for event in events):
                    return
                if not events:
                    stored = await self._store.get(response_id)
                    if stored is None or stored.response.status == "cancelled":
                        return  # deleted, or cancelled: no terminal event comes
                    if stored.response.status in SETTLED:
                        # its terminal event is written just after its row: wait for it, a
                        # little (a process that died in between leaves it to a takeover)
                        ended_at = ended_at or time.monotonic()
                        if time.monotonic() - ended_at > TERMINAL_GRACE:
                            return
                    with anyio.move_on_after(RECHECK_AFTER):
                        await woken.wait()

    async def cancel(self, response_id: str) -> Response:
        """Stop a queued or running background response; a settled one is returned as is."""
        if not await self._store.exists(response_id, "update"):  # the access rules' update
            raise NotFoundError(f"Response with id '{response_id}' not found.", param="response_id")
        response = await self._background(response_id)
        if response.status in SETTLED:
            return response
        job = await self._jobs.request_cancel(response_id)
        if job is not None and job.status == "cancelled":  # it never started
            cancelled = response.model_copy(update={"status": "cancelled"})
            await self._store.reset(response_row(cancelled))
            await self.settled(cancelled)
            return cancelled
        self._stop_here(response_id)  # if it runs in this process (else: notified, or polled)
        return await self._settled(response_id)

    async def _settled(self, response_id: str) -> Response:
        """The response once its runner stopped it (within a few seconds), else as it is."""
        with anyio.move_on_after(5.0):
            while True:
                with self.wakeups.waiting(response_id) as woken:
                    response = await self._responses.get(response_id)
                    if response.status in SETTLED:
                        return response
                    with anyio.move_on_after(0.2):
                        await woken.wait()
        return await self._responses.get(response_id)

    async def _background(self, response_id: str) -> Response:
        response = await self._responses.get(response_id)  # 404 for another project's
        if not response.background:
            raise InvalidRequestError(
                "Only responses created with background=true can be streamed again or cancelled.",
                param="response_id",
            )
        return response
