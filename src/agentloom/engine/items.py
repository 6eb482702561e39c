"""Input items as they are stored: every item gets an id and a status; ``item_reference``s are
replaced by the item they name. Shared by responses (their ``input``) and conversations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import anyio.lowlevel

from agentloom.api.items import (
    STORED_ITEM,
    Compaction,
    InputItem,
    ItemReference,
    McpApprovalRequest,
    McpApprovalResponse,
    McpListTools,
    Message,
    StoredItem,
)
from agentloom.errors import DuplicateItemError, NotFoundError
from agentloom.frozen import frozen
from agentloom.ids import new_id
from agentloom.storage.base import ConversationStore, ItemRow, ResponseStore

_NO_STATUS = (Compaction, McpListTools, McpApprovalRequest, McpApprovalResponse)
CHECKPOINT_EVERY = 256  # items resolved between two chances for other requests to run


class ItemFinder(Protocol):
    async def find_item(self, item_id: str) -> ItemRow | None: ...


@frozen
class StoredItemFinder:
    """Finds an item by id among responses' items, then conversations' items."""

    responses: ResponseStore
    conversations: ConversationStore

    async def find_item(self, item_id: str) -> ItemRow | None:
        found = await self.responses.find_item(item_id)
        return found if found is not None else await self.conversations.find_item(item_id)


async def stored_items(
    finder: ItemFinder, items: Sequence[InputItem], *, param: str, for_conversation: bool
) -> list[StoredItem]:
    """``items`` with ids and statuses, references resolved; ``param`` names the list in errors.

    Items bound for a conversation (``for_conversation``) must have distinct ids, and an
    ``item_reference`` there adds a copy of the item under a new id (an id never moves).
    """
    resolved = []
    for index, item in enumerate(items):
        if index % CHECKPOINT_EVERY == CHECKPOINT_EVERY - 1:
            await anyio.lowlevel.checkpoint()  # thousands of items: let other requests run
        resolved.append(await _resolve(finder, item, f"{param}[{index}]", copy=for_conversation))
    if for_conversation:
        check_unique(resolved, param=param)
    return resolved


def check_unique(items: Sequence[StoredItem], *, param: str) -> None:
    seen: set[str] = set()
    for index, item in enumerate(items):
        assert item.id is not None
        if item.id in seen:
            raise DuplicateItemError(item.id, param=f"{param}[{index}].id")
        seen.add(item.id)


def user_message(text: str) -> Message:
    return Message.model_validate(
        {"id": new_id("msg"), "role": "user", "content": text, "status": "completed"}
    )


async def _resolve(finder: ItemFinder, item: InputItem, param: str, *, copy: bool) -> StoredItem:
    if isinstance(item, ItemReference):
        row = await finder.find_item(item.id)
        if row is None:
            raise NotFoundError(f"Item with id '{item.id}' not found.", param=f"{param}.id")
        found = STORED_ITEM.validate_json(row.body)
        return found.model_copy(update={"id": new_id(found.ID_PREFIX)}) if copy else found
    return with_id(item)


def with_id(item: StoredItem) -> StoredItem:
    """``item`` with an id and (where its kind has one) a status: filled in place, since an
    item parsed from a request belongs to that request alone (copying 10,000 of them cost
    more than the rest of preparing them)."""
    if item.id is None:
        item.id = new_id(item.ID_PREFIX)
    if not isinstance(item, _NO_STATUS) and item.status is None:
        item.status = "completed"
    return item
