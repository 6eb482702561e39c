"""Batches as jobs: a batch's job checks its input file, runs its requests and ends it.

A project runs at most ``[batches] per_project`` batches at once, every process counted: a job
with that many of its project's batch jobs running ahead of it (queued before it) goes back to
the queue for a moment (``retry_later``). Each request's result is written as it ends
(:meth:`~agentloom.storage.batch_api.SqlBatchStore.record`), so a batch whose process was killed
is taken over by another process, which runs only the requests without a result: none is lost
and none that ended runs again. The requests that were running at the kill (at most ``[batches]
requests``) had no result yet: they run once more (their first run's answer was never kept).
A result the database failed to keep is the same: the batch goes on, and its job runs again a
moment later for the requests without a result.

The batch expires at ``expires_at``: its requests still running are stopped, the ones that
never ran go to its error file as ``batch_expired``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

import anyio

from agentloom.api.batches import ENDED, BatchError
from agentloom.batches.dispatch import Answer, Dispatcher
from agentloom.batches.ending import Endings, line_request_id, output_line
from agentloom.batches.input import BatchRequest, Input, read_input
from agentloom.config import BatchSettings
from agentloom.errors import NotFoundError
from agentloom.request_entry import (
    CLIENT_CLOSED,
    RequestEntry,
    logged_endpoint,
    logging_request,
)
from agentloom.services.files import FilesService
from agentloom.storage.batch_api import BATCH_JOB, BatchRow, Result, SqlBatchStore
from agentloom.storage.connection_faults import DATABASE_FAULTS
from agentloom.storage.jobs import JobRow
from agentloom.tenancy import current_project

log = logging.getLogger(__name__)

TURN_WAIT = 1.0  # seconds a batch waits for its project's turn before it asks again


class BatchJobs:
    """The :class:`~agentloom.services.jobs.runner.JobHandler` of kind ``"batch"``."""

    def __init__(
        self,
        store: SqlBatchStore,
        files: FilesService,
        dispatcher: Dispatcher,
        endings: Endings,
        settings: BatchSettings,
        log_request: Callable[[RequestEntry], None],
    ) -> None:
        """``log_request``: a request's row for the request log (the usage ledger's)."""
        self._store = store
        self._files = files
        self._dispatcher = dispatcher
        self._endings = endings
        self._settings = settings
        self._log_request = log_request

    async def run(self, job: JobRow) -> float | None:
        batch = await self._store.get(job.subject)
        if batch is None or batch.status in ENDED:
            return None
        if batch.status == "cancelling":
            await self._endings.end(batch, "cancelled")
            return None
        expired = time.time() >= batch.expires_at
        if not expired and await self._store.ahead(job.id, BATCH_JOB) >= self._settings.per_project:
            return time.time() + TURN_WAIT
        return await self._run(batch, job.key_id)

    async def _run(self, batch: BatchRow, key_id: str | None) -> float | None:
        """Run the batch to its end; the time to run it again from when a request's result
        could not be kept (the database failed: the requests without one run then)."""
        checked = await self._input(batch)
        if checked.errors:
            await self._end(batch, "failed", errors=checked.errors)
            return None
        started = await self._started(batch, checked)
        if started is None:
            await self._cancelled(batch.id)
            return None
        expired = await self._requests(started, checked.requests, key_id)
        ended = await self._store.ended_lines(batch.id)
        unrun = [r for r in checked.requests if r.line not in ended]
        if expired:
            await self._end(started, "expired", unrun=unrun)
        elif unrun:
            return time.time() + TURN_WAIT
        else:
            await self._finish(started)
        return None

    async def _end(
        self,
        batch: BatchRow,
        status: str,
        *,
        errors: Sequence[BatchError] = (),
        unrun: Sequence[BatchRequest] = (),
    ) -> None:
        """End the batch as ``status``, or as cancelled if a cancel came first."""
        if await self._endings.end(batch, status, errors=errors, unrun=unrun) is None:
            await self._cancelled(batch.id)

    async def _cancelled(self, batch_id: str) -> None:
        """The batch moved on meanwhile (a cancel): end it so, if it is ``cancelling``."""
        batch = await self._store.get(batch_id)
        if batch is not None and batch.status == "cancelling":
            await self._endings.end(batch, "cancelled")

    async def _input(self, batch: BatchRow) -> Input:
        try:
            content = await self._files.content(batch.input_file_id)
        except NotFoundError:
            missing = BatchError(
                code="input_file_missing",
                message=f"The input file '{batch.input_file_id}' was deleted.",
                param="input_file_id",
            )
            return Input([], [missing])
        return await anyio.to_thread.run_sync(
            read_input, content.data, batch.endpoint, self._settings.max_requests
        )

    async def _started(self, batch: BatchRow, checked: Input) -> BatchRow | None:
        if batch.status == "finalizing":
            return batch
        values: dict[str, object] = {"total": len(checked.requests), "model": checked.model}
        if batch.in_progress_at is None:
            values.update(status="in_progress", in_progress_at=time.time())
        return await self._store.update(
            batch.id, values, statuses=frozenset({"validating", "in_progress"})
        )

    async def _requests(
        self, batch: BatchRow, requests: Sequence[BatchRequest], key_id: str | None
    ) -> bool:
        """Run the requests without a result, ``[batches] requests`` at once, until the batch
        expires; whether it did. ``key_id``: the key that made the batch."""
        ended = await self._store.ended_lines(batch.id)
        pending = [r for r in requests if r.line not in ended]
        slots = anyio.Semaphore(self._settings.requests)
        with anyio.move_on_after(max(0.0, batch.expires_at - time.time())) as window:
            async with anyio.create_task_group() as tasks:
                for request in pending:
                    await slots.acquire()
                    tasks.start_soon(self._request, batch, request, key_id, slots)
        return window.cancelled_caught

    async def _request(
        self,
        batch: BatchRow,
        request: BatchRequest,
        key_id: str | None,
        slots: anyio.Semaphore,
    ) -> None:
        try:
            answer = await self._logged(batch, request, key_id)
            line = output_line(batch.id, request, status=answer.status, body=answer.body)
            result = Result(request.line, answer.status >= 400, line)
            await self._store.record(batch.id, result, answer.tokens)
        except DATABASE_FAULTS:  # its result is not kept: it runs again, the batch goes on
            log.warning("could not keep the result of line %d of %s", request.line, batch.id)
        finally:
            slots.release()

    async def _logged(self, batch: BatchRow, request: BatchRequest, key_id: str | None) -> Answer:
        """The request's answer; its row goes to the request log (under its output line's
        ``request_id``, with the batch's id), as an HTTP request's does, whether or not its
        result is then kept (a request run again is a second row, as it was a second call)."""
        endpoint = logged_endpoint("POST", batch.endpoint) or batch.endpoint
        entry = RequestEntry.opened(line_request_id(batch.id, request.line), endpoint)
        entry.project_id, entry.key_id, entry.batch_id = current_project(), key_id, batch.id
        answer: Answer | None = None
        try:
            with logging_request(entry):
                answer = await self._dispatcher.run(batch.endpoint, request.body)
            return answer
        finally:  # a request stopped (its batch expired or was cancelled), as a client gone
            entry.ended(CLIENT_CLOSED if answer is None else answer.status)
            self._log_request(entry)

    async def _finish(self, batch: BatchRow) -> None:
        finalizing = {"status": "finalizing", "finalizing_at": time.time()}
        if batch.status != "finalizing":
            moved = await self._store.update(
                batch.id, finalizing, statuses=frozenset({"in_progress"})
            )
            if moved is None:
                await self._cancelled(batch.id)
                return
            batch = moved
        await self._end(batch, "completed")

    async def stopped(self, job: JobRow) -> None:
        """Cancelled: the batch ends ``cancelled`` with the requests that ended."""
        await self._cancelled(job.subject)

    async def requeued(self, job: JobRow) -> None:
        """Nothing to undo: each request's result was kept as it ended."""

    async def abandoned(self, job: JobRow, message: str) -> None:
        batch = await self._store.get(job.subject)
        if batch is None:
            return
        error = BatchError(code="server_error", message=message)
        await self._end(batch, "failed", errors=[error])
