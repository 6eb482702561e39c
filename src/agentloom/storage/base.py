"""The storage seam for responses and their items.

Rows carry the serialized JSON of the wire objects (``body``): the engine owns the shapes, the store
owns persistence, ordering and pagination. Items are stored once, under the response that
introduced them (its new input, then its output); a ``previous_response_id`` chain is read back
by walking the chain in one query, never by copying history into every row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Literal, Protocol, TypeVar

T = TypeVar("T")
Order = Literal["asc", "desc"]
ResponseStatus = Literal["queued", "in_progress", "completed", "failed", "incomplete", "cancelled"]
TERMINAL_STATUSES: frozenset[str] = frozenset({"completed", "failed", "incomplete", "cancelled"})


@dataclass(frozen=True, slots=True)
class ResponseRow:
    id: str
    created_at: float  # unix seconds, as in the Response object
    model: str
    status: ResponseStatus
    previous_response_id: str | None
    body: str  # JSON of the Response object; its "output" is stored as items, not here


@dataclass(frozen=True, slots=True)
class ItemRow:
    id: str
    body: str  # JSON of the item


@dataclass(frozen=True, slots=True)
class StoredResponse:
    response: ResponseRow
    output: list[ItemRow]


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    data: list[T]
    has_more: bool


class ResponseStore(Protocol):
    async def begin(self, response: ResponseRow, input_items: Sequence[ItemRow]) -> None:
        """Insert a new response (usually ``in_progress``) with its new input items."""

    async def finish(self, response: ResponseRow, output_items: Sequence[ItemRow]) -> None:
        """Write the final state and the output items of a response begun with ``begin``."""

    async def save(
        self,
        response: ResponseRow,
        input_items: Sequence[ItemRow],
        output_items: Sequence[ItemRow],
    ) -> None:
        """Insert a finished response with its input and output items, in one transaction."""

    async def get(self, response_id: str) -> StoredResponse | None: ...

    async def exists(self, response_id: str) -> bool: ...

    async def delete(self, response_id: str) -> bool: ...

    async def list_page(
        self, *, after: str | None, limit: int, order: Order, model: str | None
    ) -> Page[ResponseRow]: ...

    async def outputs(self, response_ids: Sequence[str]) -> dict[str, list[ItemRow]]:
        """The output items of each of ``response_ids``, in order (for a page of the list)."""

    async def input_items(
        self,
        response_id: str,
        *,
        after: str | None,
        before: str | None,
        limit: int,
        order: Order,
    ) -> Page[ItemRow] | None:
        """The response's own input items; ``None`` when the response does not exist."""

    async def history(self, response_id: str) -> list[ItemRow] | None:
        """Input then output items of every response of the chain ending at ``response_id``,
        oldest first. ``None`` when the response does not exist."""

    async def find_item(self, item_id: str) -> ItemRow | None:
        """The most recently stored item with this id (for ``item_reference`` inputs)."""
