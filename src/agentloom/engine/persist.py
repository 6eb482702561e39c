"""Writing one response to the store: its in-progress row, then its final state.

The final state is written *before* the terminal event is released, so a client that reacts to
``response.completed`` always finds the stored response. The in-progress row (what a retrieve
sees while the response runs, and what crash recovery fails) is written ``begin_delay``
seconds after the start, beside the model call; a response that ends sooner is written once, in
one transaction, instead of twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import anyio

from agentloom.api.items import OutputItem, StoredItem
from agentloom.api.response import Response
from agentloom.offload import off_loop
from agentloom.storage.base import ConversationTurn, ItemRow, ResponseRow, ResponseStore

DEFAULT_BEGIN_DELAY = 0.05
LARGE_WRITE = 256  # items from which their rows are encoded in a worker thread


class ResponseWriter:
    def __init__(
        self,
        store: ResponseStore,
        response: Response,
        input_items: Sequence[StoredItem],
        *,
        begin_delay: float = DEFAULT_BEGIN_DELAY,
        queued: bool = False,
    ) -> None:
        """``queued``: the response's row was written when it was queued (background)."""
        self._store = store
        self._queued = queued
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

    async def finish(self, response: Response, turn: ConversationTurn | None = None) -> None:
        """Write the final state, ending the conversation ``turn`` in the same transaction
        (shielded: a cancelled client does not lose the row)."""
        self._timer.cancel()
        with anyio.CancelScope(shield=True):
            final, outputs = response_row(response), item_rows(response.output)
            if self._begun is None and self._queued:
                await self._store.start(response_row(self._response), await self._input_rows())
                await self._store.finish(final, outputs, turn)
            elif self._begun is None:
                await self._store.save(final, await self._input_rows(), outputs, turn)
            else:
                await self._begun
                await self._store.finish(final, outputs, turn)


def response_row(response: Response) -> ResponseRow:
    """The response's row: its output is stored as items, so the body's is empty."""
    head = response.model_dump_json(exclude={"output"})
    body = head[:-1] + ',"output":[]}'
    return ResponseRow(
        id=response.id,
        created_at=response.created_at,
        model=response.model,
        status=response.status,
        previous_response_id=response.previous_response_id,
        body=body,
    )


def item_rows(items: Sequence[StoredItem | OutputItem]) -> list[ItemRow]:
    rows: list[ItemRow] = []
    for item in items:
        assert item.id is not None, "items get their id before they are stored"
        rows.append(ItemRow(id=item.id, body=item.model_dump_json()))
    return rows
