"""The storage seam for responses and their items.

Rows carry the serialized JSON of the wire objects (``body``): the engine owns the shapes, the store
owns persistence, ordering and pagination. Items are stored once, under the response that
introduced them (its new input, then its output); a ``previous_response_id`` chain is read back
by walking the chain in one query, never by copying history into every row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, Literal, Protocol, TypeVar

from agentloom.access_rules import Action
from agentloom.frozen import frozen

T = TypeVar("T")
Order = Literal["asc", "desc"]
ResponseStatus = Literal["queued", "in_progress", "completed", "failed", "incomplete", "cancelled"]
TERMINAL_STATUSES: frozenset[str] = frozenset({"completed", "failed", "incomplete", "cancelled"})


@frozen
class ResponseRow:
    id: str
    created_at: float  # unix seconds, as in the Response object
    model: str
    status: ResponseStatus
    previous_response_id: str | None
    body: str  # JSON of the Response object; its "output" is stored as items, not here
    trace: str | None = None  # JSON of its run's timeline (agentloom.timeline), once it ended


@frozen
class ItemRow:
    id: str
    body: str  # JSON of the item

    @classmethod
    def of(cls, row: Any) -> ItemRow:
        """The item of a result row with ``id`` and ``body`` columns."""
        return cls(id=row.id, body=row.body)


@frozen
class ResponseQuery:
    """A page of the stored responses: after the response ``after``, ``limit`` of them in
    ``order``, those that match every filter given (``created_after`` inclusive,
    ``created_before`` exclusive, unix seconds; ``metadata``: pairs that must all be there)."""

    after: str | None = None
    limit: int = 20
    order: Order = "desc"
    model: str | None = None
    status: ResponseStatus | None = None
    created_after: float | None = None
    created_before: float | None = None
    metadata: tuple[tuple[str, str], ...] = ()


@frozen
class StoredResponse:
    response: ResponseRow
    output: list[ItemRow]


@frozen
class StoredTrace:
    """A stored response's status and its run's trace (``None``: none was recorded)."""

    status: ResponseStatus
    trace: str | None


@frozen
class Owned:
    """An object of some project, as found by work that serves every project (housekeeping):
    it acts on the object as that project (:func:`agentloom.tenancy.acting_for`)."""

    project_id: str
    id: str


@frozen
class Page(Generic[T]):
    data: list[T]
    has_more: bool


class ResponseStore(Protocol):
    async def start(self, response: ResponseRow, input_items: Sequence[ItemRow]) -> None:
        """A queued (background) response starts: its row updated, its input items written."""

    async def reset(self, response: ResponseRow) -> None:
        """A background response goes back to the queue: its items dropped, its row as
        given."""

    async def begin(self, response: ResponseRow, input_items: Sequence[ItemRow]) -> None:
        """Insert a new response (usually ``in_progress``) with its new input items."""

    async def finish(
        self,
        response: ResponseRow,
        output_items: Sequence[ItemRow],
        turn: ConversationTurn | None = None,
    ) -> None:
        """Write the final state and the output items of a response begun with ``begin`` (and
        end its conversation ``turn``, in the same transaction)."""

    async def save(
        self,
        response: ResponseRow,
        input_items: Sequence[ItemRow],
        output_items: Sequence[ItemRow],
        turn: ConversationTurn | None = None,
    ) -> None:
        """Insert a finished response with its input and output items (and end its
        conversation ``turn``), in one transaction."""

    async def get(self, response_id: str) -> StoredResponse | None: ...

    async def trace(self, response_id: str) -> StoredTrace | None:
        """The response's status and trace; ``None`` when the response does not exist."""

    async def exists(self, response_id: str, action: Action = "read") -> bool:
        """Whether the response exists (and the access rules let the viewer ``action`` it)."""

    async def delete(self, response_id: str) -> bool: ...

    async def list_page(self, query: ResponseQuery) -> Page[ResponseRow]:
        """The project's responses that match ``query``, a page of them (in ``seq`` order)."""

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


# --- conversations ---------------------------------------------------------------------------


@frozen
class ConversationRow:
    id: str
    created_at: float
    metadata: str  # JSON object
    version: int  # grows with every change of the conversation's items


@frozen
class ConversationTurn:
    """How a response that ran on a conversation ends: its items are appended (``items``, in
    order; empty when it failed) and the conversation is unlocked."""

    conversation_id: str
    response_id: str
    items: Sequence[ItemRow]
    created_at: float


class ConversationStore(Protocol):
    """Conversations and their ordered items. A response running on a conversation holds its
    lock; while it does, item changes and deletion raise ``ConversationLockedError``."""

    async def create(self, conversation: ConversationRow, items: Sequence[ItemRow]) -> None: ...

    async def get(self, conversation_id: str) -> ConversationRow | None: ...

    async def list_page(
        self, *, after: str | None, limit: int, order: Order
    ) -> Page[ConversationRow] | None:
        """The project's conversations by creation; ``None`` when ``after`` is not one of
        them."""

    async def update_metadata(self, conversation_id: str, metadata: str) -> ConversationRow | None:
        """The updated conversation; ``None`` when it does not exist."""

    async def delete(self, conversation_id: str) -> bool:
        """Delete the conversation and its items; ``False`` when it does not exist."""

    async def add_items(self, conversation_id: str, items: Sequence[ItemRow]) -> int:
        """Append ``items``; returns the new version. Raises ``NotFoundError`` (no such
        conversation), ``ConversationLockedError``, ``DuplicateItemError`` (an id is taken)."""

    async def items(self, conversation_id: str) -> list[ItemRow]:
        """Every item of the conversation, in order (one query)."""

    async def list_items(
        self, conversation_id: str, *, after: str | None, limit: int, order: Order
    ) -> Page[ItemRow] | None:
        """A page of items; ``None`` when the conversation does not exist."""

    async def get_item(self, conversation_id: str, item_id: str) -> ItemRow | None: ...

    async def delete_item(self, conversation_id: str, item_id: str) -> bool:
        """``False`` when the item is not in the conversation. Raises ``NotFoundError`` for a
        missing conversation and ``ConversationLockedError``."""

    async def find_item(self, item_id: str) -> ItemRow | None:
        """The conversation item with this id, in whichever conversation it is."""

    async def taken(self, item_ids: Sequence[str]) -> list[str]:
        """Which of ``item_ids`` are already items of a conversation."""

    async def lock(self, conversation_id: str, response_id: str) -> int:
        """Lock the conversation for a response; returns its version. Raises ``NotFoundError``
        or ``ConversationLockedError`` (another response of a live server holds it)."""

    async def end_turn(self, turn: ConversationTurn) -> None:
        """Append the turn's items and unlock (for responses that are not stored; stored ones
        end their turn in the same transaction as their final write)."""
