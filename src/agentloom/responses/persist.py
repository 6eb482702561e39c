"""Writing one response to the store: its in-progress row, then its final state.

The final state is written *before* the terminal event is released, so a client that reacts to
``response.completed`` always finds the stored response. The in-progress row (what a retrieve
sees while the response runs, and what crash recovery fails) is written ``begin_delay``
seconds after the start, beside the model call; a response that ends sooner is written once, in
one transaction, instead of twice.

A final write the database lost in flight (PostgreSQL: the connection ended under it) may have
landed or not: the writer reads what is stored and writes what is missing, for a few seconds
while the database comes back. Past that the caller gets the error (a stream's ``error``
event, a 503), and the write is kept in :class:`LostWrites` until the server's housekeeping
makes it: a live process never leaves a response it ran ``in_progress``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

import anyio

from agentloom.api.items import OutputItem, StoredItem
from agentloom.api.response import Response
from agentloom.errors import DatabaseUnavailableError
from agentloom.offload import off_loop
from agentloom.shielding import shielded
from agentloom.storage.base import ConversationTurn, ItemRow, ResponseRow, ResponseStore
from agentloom.storage.connection_faults import DATABASE_FAULTS
from agentloom.tenancy import acting_for, current_project

log = logging.getLogger(__name__)

DEFAULT_BEGIN_DELAY = 0.05
SETTLE_AFTER = (0.1, 0.4, 1.0, 2.0)  # seconds before each try of settling a lost final write
MAX_LOST_WRITES = 10_000  # final writes kept for the database's return, at most
LARGE_WRITE = 256  # items from which their rows are encoded in a worker thread


class LostWrites:
    """Final writes the database lost for longer than their request waited, kept until the
    server's housekeeping writes them (:meth:`retry`): a live process never leaves a response
    it ran ``in_progress`` because the database was away when it ended."""

    def __init__(self, limit: int = MAX_LOST_WRITES) -> None:
        self._limit = limit
        self._writes: dict[str, Callable[[], Awaitable[None]]] = {}

    def __len__(self) -> int:
        return len(self._writes)

    def keep(self, response_id: str, write: Callable[[], Awaitable[None]]) -> None:
        if len(self._writes) >= self._limit:
            dropped = next(iter(self._writes))
            del self._writes[dropped]
            log.error("too many final writes waiting for the database: %s is dropped", dropped)
        self._writes[response_id] = write

    async def retry(self) -> int:
        """Write what was kept, oldest first, until the database fails again; how many
        landed. A write that fails otherwise (a bug, not the database) is logged and dropped."""
        landed = 0
        for response_id, write in list(self._writes.items()):
            try:
                await write()
            except DatabaseUnavailableError:
                return landed
            except DATABASE_FAULTS:
                log.exception("the kept final write of %s failed; dropped", response_id)
            del self._writes[response_id]
            landed += 1
        return landed


class ResponseWriter:
    def __init__(
        self,
        store: ResponseStore,
        response: Response,
        input_items: Sequence[StoredItem],
        *,
        begin_delay: float = DEFAULT_BEGIN_DELAY,
        queued: bool = False,
        lost: LostWrites | None = None,
    ) -> None:
        """``queued``: the response's row was written when it was queued (background).
        ``lost``: where a final write the database lost for good is kept for later."""
        self._store = store
        self._queued = queued
        self._lost = lost
        self._response = response  # its in-progress row is encoded only if it is written
        self._input_items = input_items
        self._inputs: list[ItemRow] | None = None
        self._begun: asyncio.Future[None] | None = None
        self._timer = asyncio.get_running_loop().call_later(begin_delay, self._begin)

    def _begin(self) -> None:
        self._begun = asyncio.ensure_future(self._write_begin())

    async def _write_begin(self) -> None:
        row = response_row(self._response)
        if self._queued:
            await self._store.start(row, await self._input_rows())
        else:
            await self._store.begin(row, await self._input_rows())

    async def _input_rows(self) -> list[ItemRow]:
        """The input items' rows, encoded once: off the event loop when there are many."""
        if self._inputs is None:
            items = self._input_items
            self._inputs = await off_loop(len(items) >= LARGE_WRITE, item_rows, items)
        return self._inputs

    async def finish(
        self,
        response: Response,
        turn: ConversationTurn | None = None,
        trace: str | None = None,
    ) -> str:
        """Write the final state with the run's ``trace`` (encoded), ending the conversation
        ``turn`` in the same transaction (shielded: a cancelled client does not lose the row).
        A write the database lost in flight is settled by :meth:`_settle`. The response's
        JSON, made once for its row and its reply."""
        self._timer.cancel()
        with shielded():
            outputs = item_rows(response.output)
            final, whole = final_row(response, outputs, trace)
            try:
                await self._write_final(final, outputs, turn)
            except DatabaseUnavailableError:
                log.warning("the final write of %s was lost; settling it", final.id)
                await self._settle(final, outputs, turn)
        return whole

    async def _write_final(
        self, final: ResponseRow, outputs: list[ItemRow], turn: ConversationTurn | None
    ) -> None:
        if self._begun is None and self._queued:
            await self._store.start(response_row(self._response), await self._input_rows())
            await self._store.finish(final, outputs, turn)
        elif self._begun is None:
            await self._store.save(final, await self._input_rows(), outputs, turn)
        else:
            await self._begun
            await self._store.finish(final, outputs, turn)

    async def _settle(
        self, final: ResponseRow, outputs: list[ItemRow], turn: ConversationTurn | None
    ) -> None:
        """A write lost in flight may have landed or not (nor may the in-progress row): read
        what is stored and write what is missing, while the database comes back. Still
        unavailable after :data:`SETTLE_AFTER`, the error goes to the caller."""
        for pause in SETTLE_AFTER:
            await anyio.sleep(pause)
            try:
                await self._write_missing(final, outputs, turn)
                return
            except DatabaseUnavailableError:
                if pause == SETTLE_AFTER[-1]:
                    self._keep(final, outputs, turn)
                    raise

    def _keep(
        self, final: ResponseRow, outputs: list[ItemRow], turn: ConversationTurn | None
    ) -> None:
        """Leave the write to :class:`LostWrites`, as work of this response's project (a
        background response's is not: its job is taken over and settles it)."""
        if self._lost is None or self._queued:
            return
        project = current_project()

        async def write() -> None:
            with acting_for(project):
                await self._write_missing(final, outputs, turn)

        self._lost.keep(final.id, write)

    async def _write_missing(
        self, final: ResponseRow, outputs: list[ItemRow], turn: ConversationTurn | None
    ) -> None:
        stored = await self._store.get(final.id)
        status = None if stored is None else stored.response.status
        if status == final.status:
            return  # the lost write had landed
        if status is None:
            await self._store.save(final, await self._input_rows(), outputs, turn)
        elif status == "queued":
            await self._store.start(response_row(self._response), await self._input_rows())
            await self._store.finish(final, outputs, turn)
        else:
            await self._store.finish(final, outputs, turn)


def response_row(response: Response, trace: str | None = None) -> ResponseRow:
    """The response's row: its output is stored as items, so the body's is empty;
    ``trace``: its run's, encoded (:mod:`agentloom.timeline`)."""
    head = response.model_dump_json(exclude={"output"})
    return _row(response, head[:-1] + ',"output":[]}', trace)


def _row(response: Response, body: str, trace: str | None) -> ResponseRow:
    return ResponseRow(
        id=response.id,
        created_at=response.created_at,
        model=response.model,
        status=response.status,
        previous_response_id=response.previous_response_id,
        body=body,
        trace=trace,
    )


def final_row(
    response: Response, outputs: Sequence[ItemRow], trace: str | None
) -> tuple[ResponseRow, str]:
    """The response's final row and its JSON (``model_dump_json()``'s, for the reply), encoded
    once: the row's body is that JSON with the output (stored as ``outputs``) left empty where
    it stands. Where the output's encoding is not found in it, the body is made on its own."""
    whole = response.model_dump_json()
    output = '"output":[' + ",".join(row.body for row in outputs) + "]"
    at = whole.find(output)
    if at < 0:
        return response_row(response, trace), whole
    body = whole[:at] + '"output":[]' + whole[at + len(output) :]
    return _row(response, body, trace), whole


def item_rows(items: Sequence[StoredItem | OutputItem]) -> list[ItemRow]:
    rows: list[ItemRow] = []
    for item in items:
        assert item.id is not None, "items get their id before they are stored"
        rows.append(ItemRow(id=item.id, body=item.model_dump_json()))
    return rows
