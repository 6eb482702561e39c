"""How a batch ends: its output and error files written from its requests' results, its final
status set, its webhook event announced.

Every step can be taken again with the same outcome (a batch's process may stop at any point of
it, and another one ends the batch): the files' ids are derived from the batch's
(:func:`~agentloom.services.files.derived_file_id`: written again, the file is the one already
there), the status moves only from the statuses it may end from, and the event's id is derived
from the batch's and its type (announced again, it adds nothing).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Awaitable, Callable, Sequence

from agentloom.api.batches import BatchError, LineError, LineResponse, OutputLine
from agentloom.batches.input import BatchRequest
from agentloom.services.files import FilesService, derived_file_id
from agentloom.storage.batch_api import BatchRow, Result, SqlBatchStore, Tokens

Announce = Callable[[str, str, float | None], Awaitable[None]]
"""``(event type, batch id, when)``: a webhook event (``WebhooksService.announce_event``)."""

OUTPUT_PURPOSE = "batch_output"
# the statuses a batch ends from, by the status it ends in
ENDS_FROM: dict[str, frozenset[str]] = {
    "completed": frozenset({"finalizing"}),
    "cancelled": frozenset({"cancelling"}),
    "expired": frozenset({"validating", "in_progress", "finalizing"}),
    "failed": frozenset({"validating", "in_progress", "finalizing", "cancelling"}),
}


class Endings:
    def __init__(self, store: SqlBatchStore, files: FilesService, announce: Announce) -> None:
        self._store = store
        self._files = files
        self._announce = announce

    async def end(
        self,
        batch: BatchRow,
        status: str,
        *,
        errors: Sequence[BatchError] = (),
        unrun: Sequence[BatchRequest] = (),
    ) -> BatchRow | None:
        """End ``batch`` as ``status``; ``unrun``: its requests that never ran (an expired
        batch's), written to its error file as such. The batch as it ended (``None``: it was
        ended otherwise meanwhile)."""
        for request in unrun:
            error = LineError(code="batch_expired", message="The batch expired before this ran.")
            line = output_line(batch.id, request, error=error)
            await self._store.record(batch.id, Result(request.line, True, line), Tokens())
        values = await self._files_of(batch)
        now = time.time()
        values[f"{status}_at"] = now
        if errors:
            values["errors"] = json.dumps([e.model_dump(exclude_none=True) for e in errors])
        ended = await self._store.update(
            batch.id, {"status": status, **values}, statuses=ENDS_FROM[status]
        )
        if ended is not None:
            await self._announce(f"batch.{status}", batch.id, now)
        return ended

    async def _files_of(self, batch: BatchRow) -> dict[str, object]:
        results = await self._store.results(batch.id)
        values: dict[str, object] = {}
        for kind, failed in (("output", False), ("error", True)):
            lines = [r.body for r in results if r.failed is failed]
            if lines:
                values[f"{kind}_file_id"] = await self._write(batch, kind, lines)
        return values

    async def _write(self, batch: BatchRow, kind: str, lines: list[str]) -> str:
        data = "".join(line + "\n" for line in lines).encode()
        written = await self._files.write(
            data,
            file_id=derived_file_id(batch.id, kind),
            filename=f"{batch.id}_{kind}.jsonl",
            purpose=OUTPUT_PURPOSE,
            expires_in=batch.output_expires_after,
        )
        return written.id


def output_line(
    batch_id: str,
    request: BatchRequest,
    *,
    status: int = 0,
    body: dict[str, object] | None = None,
    error: LineError | None = None,
) -> str:
    """The request's line of the output or error file, as JSON: its answer (``status`` and
    ``body``), or the ``error`` that kept it from getting one."""
    digest = _digest(batch_id, request.line)
    response = None
    if body is not None:
        response = LineResponse(
            status_code=status, request_id=line_request_id(batch_id, request.line), body=body
        )
    line = OutputLine(
        id="batch_req_" + digest[:32], custom_id=request.custom_id, response=response, error=error
    )
    return line.model_dump_json()


def line_request_id(batch_id: str, line: int) -> str:
    """The ``request_id`` of a line's answer (and of its row in the request log)."""
    return "req_" + _digest(batch_id, line)[32:]


def _digest(batch_id: str, line: int) -> str:
    return hashlib.sha256(f"{batch_id}/{line}".encode()).hexdigest()
