"""The Batch API's service: create a batch (its row and its job, in one transaction), read and
list a project's batches, cancel one.

A batch is created ``validating``; its job (:mod:`agentloom.batches.jobs`) reads and checks its
input file, runs its requests and ends it. A cancel marks it ``cancelling`` and stops its job:
one still queued ends ``cancelled`` at once, a running one as soon as its process hears of it
(its requests that ended are in its files).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from agentloom.access_rules import Action
from agentloom.api.batches import (
    COMPLETION_WINDOW,
    ENDPOINTS,
    OPENAI_ONLY_ENDPOINTS,
    Batch,
    BatchError,
    BatchErrors,
    BatchRequestCounts,
    BatchUsage,
    CreateBatchRequest,
    InputTokensDetails,
    OutputTokensDetails,
)
from agentloom.api.lists import ListPage
from agentloom.batches.ending import Endings
from agentloom.config import BatchSettings
from agentloom.errors import ConflictError, InvalidRequestError, NotFoundError
from agentloom.ids import new_id
from agentloom.services.files import FilesService
from agentloom.storage.batch_api import BATCH_JOB, BatchRow, SqlBatchStore
from agentloom.storage.jobs import JobRow, SqlJobStore
from agentloom.storage.scoped import acting_owner
from agentloom.tenancy import current_key, current_project

INPUT_PURPOSE = "batch"
CANCELLABLE = frozenset({"validating", "in_progress", "finalizing"})


class BatchesService:
    def __init__(
        self,
        store: SqlBatchStore,
        jobs: SqlJobStore,
        files: FilesService,
        endings: Endings,
        settings: BatchSettings,
        *,
        nudge: Callable[[], None],
    ) -> None:
        """``nudge``: tells this process's job runner a job was queued."""
        self._nudge = nudge
        self._store = store
        self._jobs = jobs
        self._files = files
        self._endings = endings
        self._settings = settings

    async def create(self, request: CreateBatchRequest) -> Batch:
        _check_endpoint(request.endpoint)
        _check_window(request.completion_window)
        await self._check_input(request.input_file_id)
        now = time.time()
        expiry = request.output_expires_after
        row = BatchRow(
            id=new_id("batch"),
            created_at=now,
            endpoint=request.endpoint,
            input_file_id=request.input_file_id,
            completion_window=request.completion_window,
            status="validating",
            expires_at=now + self._settings.window,
            metadata=None if request.metadata is None else json.dumps(request.metadata),
            output_expires_after=None if expiry is None else expiry.seconds,
        )
        await self._store.create(row, _job(row))
        self._nudge()
        return batch_object(row)

    async def get(self, batch_id: str) -> Batch:
        return batch_object(await self._row(batch_id))

    async def list(self, after: str | None, limit: int) -> ListPage[Batch]:
        page = await self._store.list_page(after, limit)
        if page is None:
            raise NotFoundError(f"No batch found with id '{after}'.", param="after")
        return ListPage.of([batch_object(row) for row in page.data], has_more=page.has_more)

    async def cancel(self, batch_id: str) -> Batch:
        batch = await self._row(batch_id, "update")
        if batch.status in ("cancelling", "cancelled"):
            return batch_object(batch)
        marked = await self._store.update(
            batch_id,
            {"status": "cancelling", "cancelling_at": time.time()},
            statuses=CANCELLABLE,
        )
        if marked is None:
            batch = await self._row(batch_id)
            raise ConflictError(
                f"The batch '{batch_id}' is {batch.status}: it cannot be cancelled.",
                param="batch_id",
            )
        job = await self._jobs.request_cancel_job(_job_id(batch_id))
        if job is not None and job.status == "cancelled":  # it was waiting: it never runs
            marked = await self._endings.end(marked, "cancelled") or marked
        return batch_object(marked)

    async def _check_input(self, file_id: str) -> None:
        try:
            file = await self._files.get(file_id)
        except NotFoundError:
            raise NotFoundError(
                f"No such File object: {file_id[:100]}", param="input_file_id"
            ) from None
        if file.purpose != INPUT_PURPOSE:
            raise InvalidRequestError(
                f"The file '{file_id}' was uploaded with purpose '{file.purpose}'; "
                "a batch's input file has purpose 'batch'.",
                param="input_file_id",
                code="invalid_file_purpose",
            )

    async def _row(self, batch_id: str, action: Action = "read") -> BatchRow:
        row = await self._store.get(batch_id, action)
        if row is None:
            raise NotFoundError(f"No batch found with id '{batch_id[:100]}'.", param="batch_id")
        return row


def _job_id(batch_id: str) -> str:
    return "job_" + batch_id.removeprefix("batch_")


def _job(row: BatchRow) -> JobRow:
    return JobRow(
        id=_job_id(row.id),
        project_id=current_project(),
        kind=BATCH_JOB,
        subject=row.id,
        key_id=current_key(),
        owner=acting_owner(),
        payload="{}",
        created_at=row.created_at,
    )


def _check_endpoint(endpoint: str) -> None:
    if endpoint in ENDPOINTS:
        return
    why = (
        "is an OpenAI batch endpoint this server does not run"
        if endpoint in OPENAI_ONLY_ENDPOINTS
        else "is not a batch endpoint"
    )
    raise InvalidRequestError(
        f"'{endpoint[:100]}' {why}; it runs: {', '.join(ENDPOINTS)}.",
        param="endpoint",
        code="invalid_value",
    )


def _check_window(window: str) -> None:
    if window != COMPLETION_WINDOW:
        raise InvalidRequestError(
            f"The completion_window '{window[:20]}' is not supported; it must be "
            f"'{COMPLETION_WINDOW}'.",
            param="completion_window",
            code="invalid_value",
        )


def batch_object(row: BatchRow) -> Batch:
    times = {
        name: None if value is None else int(value)
        for name, value in (
            ("in_progress_at", row.in_progress_at),
            ("finalizing_at", row.finalizing_at),
            ("completed_at", row.completed_at),
            ("failed_at", row.failed_at),
            ("expired_at", row.expired_at),
            ("cancelling_at", row.cancelling_at),
            ("cancelled_at", row.cancelled_at),
        )
    }
    return Batch(
        id=row.id,
        endpoint=row.endpoint,
        model=row.model,
        errors=_errors(row.errors),
        input_file_id=row.input_file_id,
        completion_window=row.completion_window,
        status=row.status,  # one of BatchStatus, as written
        output_file_id=row.output_file_id,
        error_file_id=row.error_file_id,
        created_at=int(row.created_at),
        expires_at=int(row.expires_at),
        request_counts=BatchRequestCounts(
            completed=row.completed, failed=row.failed, total=row.total
        ),
        usage=_usage(row),
        metadata=None if row.metadata is None else json.loads(row.metadata),
        **times,
    )


def _errors(stored: str | None) -> BatchErrors | None:
    if stored is None:
        return None
    return BatchErrors(data=[BatchError.model_validate(e) for e in json.loads(stored)])


def _usage(row: BatchRow) -> BatchUsage:
    return BatchUsage(
        input_tokens=row.input_tokens,
        input_tokens_details=InputTokensDetails(cached_tokens=row.cached_tokens),
        output_tokens=row.output_tokens,
        output_tokens_details=OutputTokensDetails(reasoning_tokens=row.reasoning_tokens),
        total_tokens=row.input_tokens + row.output_tokens,
    )
