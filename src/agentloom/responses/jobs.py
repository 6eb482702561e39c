"""Background responses as jobs: run one, and settle it however its job ends.

A run prepares the stored request again and streams it, writing every event (in small
batches: :mod:`agentloom.services.jobs.event_writer`). The first event of a tool call with effects
outside the response marks the job irreversible: a takeover then fails it rather than running
the tool again. A response that ended before its job did (its process died in between) is not
run again.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from functools import partial

import anyio

from agentloom.api import events as ev
from agentloom.api.events import TerminalEvent
from agentloom.api.requests import CreateResponseRequest
from agentloom.api.response import Response, ResponseError
from agentloom.errors import AgentloomError
from agentloom.responses.background import SETTLED, TERMINAL_EVENTS, BackgroundResponses
from agentloom.responses.persist import response_row
from agentloom.responses.service import ResponsesService
from agentloom.services.jobs.event_writer import EventWriter
from agentloom.storage.events import SqlEventStore, StoredEvent
from agentloom.storage.jobs import JobRow, SqlJobStore

log = logging.getLogger(__name__)

ENDED = frozenset({"completed", "failed", "incomplete"})  # by the run itself
SIDE_EFFECTS = frozenset(
    {"response.code_interpreter_call.in_progress", "response.mcp_call.in_progress"}
)


class ResponseJobs:
    """The :class:`~agentloom.services.jobs.runner.JobHandler` of kind ``"response"``."""

    def __init__(
        self,
        background: BackgroundResponses,
        responses: ResponsesService,
        jobs: SqlJobStore,
        events: SqlEventStore,
        *,
        instance_id: str,
        released: Callable[[str], bool] = lambda _job_id: False,
    ) -> None:
        """``released(job_id)``: the job is let go (handed back, taken over): its run's end
        is not written."""
        self._released = released
        self._background = background
        self._responses = responses
        self._jobs = jobs
        self._events = events
        self._instance = instance_id

    async def run(self, job: JobRow) -> float | None:
        if job.attempts > 1:  # run before: it may have ended just before its process stopped
            ended = await self._responses.get(job.subject)
            if ended.status in SETTLED:
                await self._background.settled(ended)
                return None
            await self._events.clear(job.subject)  # else it starts afresh
        final = await self._respond(job)
        if final is not None:
            with anyio.CancelScope(shield=True):
                await self._background.settled(final)
        return None

    async def _respond(self, job: JobRow) -> Response | None:
        """Run the response; how it ended (``None`` when it was abandoned or stopped)."""
        payload = json.loads(job.payload)
        request = CreateResponseRequest.model_validate(payload["request"])
        identity = (job.subject, int(payload["created_at"]))
        try:
            prepared = await self._responses.prepare(request, identity=identity)
        except AgentloomError as exc:  # what it refers to changed since it was queued
            await self.abandoned(job, exc.stated())
            return None
        writer = EventWriter(self._events, self._background.wakeups.wake, job.subject)
        marked = False
        final: Response | None = None
        try:
            released = partial(self._released, job.id)
            async for event in self._responses.stream(prepared, released=released):
                if not marked and event.type in SIDE_EFFECTS:
                    await self._jobs.mark_irreversible(job.id, self._instance)
                    marked = True
                if isinstance(event, TerminalEvent):
                    final = event.response
                stored = StoredEvent(event.sequence_number, event.type, event.model_dump_json())
                await writer.add(stored, last=event.type in TERMINAL_EVENTS)
        finally:
            with anyio.CancelScope(shield=True):
                await writer.flush()
        return final

    async def stopped(self, job: JobRow) -> None:
        """Cancelled: a response that had not recorded an end yet (cancelled as it started)
        is marked ``cancelled`` here."""
        response = await self._responses.get(job.subject)
        if response.status not in SETTLED:
            response = response.model_copy(update={"status": "cancelled"})
            await self._responses.reset(response_row(response))
        await self._background.settled(response)

    async def requeued(self, job: JobRow) -> None:
        """The response as it was queued: no output, no events (it runs again); one that had
        ended before its process stopped stays as it is (a run stopped by the hand-back itself
        wrote no end: it reads ``in_progress`` until this)."""
        response = await self._responses.get(job.subject)
        if response.status in ENDED or (response.status == "cancelled" and job.cancel_requested):
            return
        queued = response.model_copy(update={"status": "queued", "output": [], "usage": None})
        await self._responses.reset(response_row(queued))
        await self._events.clear(job.subject)

    async def abandoned(self, job: JobRow, message: str) -> None:
        response = await self._responses.get(job.subject)
        error = ResponseError(code="server_error", message=message)
        failed = response.model_copy(update={"status": "failed", "error": error})
        await self._responses.reset(response_row(failed))
        await self._events.clear(job.subject)
        terminal = ev.ResponseFailed(sequence_number=0, response=failed)
        await self._events.append(
            job.subject, [StoredEvent(0, terminal.type, terminal.model_dump_json())]
        )
        await self._background.settled(failed)
