"""The conversations service: the Conversations API, and the hold a response takes on the
conversation it runs on.

A response with ``conversation`` takes the conversation's lock before it reads the history
(:meth:`ConversationsService.begin_turn`), so the history it sees cannot change under it and two
responses never interleave their items: a second response on a locked conversation is refused
with 409 ``conversation_locked``, as are item changes and deletion while it runs. Its input and
output items are appended when it ends (in the transaction of its final write), and the lock is
released then, or at once if it never runs.

Parsed histories are cached per conversation with the conversation's version (every change of
its items bumps it). Taking the lock returns the current version, so a long conversation costs
one lock statement per turn and no re-reading or re-parsing of its items, as long as no other
writer (or server process) changed them.
"""

from __future__ import annotations

import json
import re
import time
from collections import OrderedDict
from collections.abc import Sequence

import anyio

from agentloom.api.conversations import (
    AddItemsRequest,
    Conversation,
    ConversationItemList,
    CreateConversationRequest,
    DeletedConversation,
    UpdateConversationRequest,
)
from agentloom.api.items import STORED_ITEM, InputItem, StoredItem
from agentloom.api.lists import ListPage
from agentloom.engine.attachments import Attachments
from agentloom.engine.context import Context, parse_items
from agentloom.engine.holds import Turn
from agentloom.engine.items import ItemFinder, stored_items
from agentloom.engine.messages import SummaryReader
from agentloom.errors import DuplicateItemError, InvalidRequestError, NotFoundError
from agentloom.frozen import frozen
from agentloom.ids import new_id
from agentloom.storage.base import (
    ConversationRow,
    ConversationStore,
    ConversationTurn,
    ItemRow,
    Order,
)

DEFAULT_CACHE_SIZE = 256
_CONVERSATION_ID = re.compile(r"conv_[A-Za-z0-9_\-]{1,90}")


def check_conversation_id(value: str, *, param: str) -> str:
    """A malformed conversation id is the caller's 400 (a well-formed unknown one is a 404)."""
    if _CONVERSATION_ID.fullmatch(value) is None:
        raise InvalidRequestError(
            f"Invalid '{param}': '{value[:100]}'. Expected an ID that begins with 'conv_'.",
            param=param,
            code="invalid_value",
        )
    return value


@frozen
class ItemQuery:
    after: str | None = None
    limit: int = 20
    order: Order = "desc"


class ConversationsService:
    def __init__(
        self,
        *,
        store: ConversationStore,
        finder: ItemFinder,
        reader: SummaryReader,
        cache_size: int = DEFAULT_CACHE_SIZE,
        attachments: Attachments | None = None,
    ) -> None:
        self._store = store
        self._finder = finder
        self._reader = reader
        self._attachments = attachments or Attachments()
        self._cache: OrderedDict[str, tuple[int, Context]] = OrderedDict()
        self._cache_size = cache_size

    # --- the Conversations API ---------------------------------------------------------------

    async def create(self, request: CreateConversationRequest) -> Conversation:
        items = await self._new_items(request.items or [])
        row = ConversationRow(
            id=new_id("conv"),
            created_at=time.time(),
            metadata=json.dumps(request.metadata or {}),
            version=1 if items else 0,
        )
        try:
            await self._store.create(row, _rows(items))
        except DuplicateItemError as exc:
            raise exc.at(_item_param(items, exc.item_id)) from None
        return _conversation(row)

    async def get(self, conversation_id: str) -> Conversation:
        return _conversation(await self._row(conversation_id))

    async def list_page(self, query: ItemQuery) -> ListPage[Conversation]:
        """The project's conversations, a page (an agentloom extension: OpenAI lists none)."""
        page = None
        if query.after is None or _CONVERSATION_ID.fullmatch(query.after):
            page = await self._store.list_page(
                after=query.after, limit=query.limit, order=query.order
            )
        if page is None:
            raise NotFoundError(f"Conversation with id '{query.after}' not found.", param="after")
        return ListPage[Conversation].of(
            [_conversation(row) for row in page.data], has_more=page.has_more
        )

    async def update(
        self, conversation_id: str, request: UpdateConversationRequest
    ) -> Conversation:
        check_conversation_id(conversation_id, param="conversation_id")
        row = await self._store.update_metadata(conversation_id, json.dumps(request.metadata or {}))
        if row is None:
            raise _not_found(conversation_id)
        return _conversation(row)

    async def delete(self, conversation_id: str) -> DeletedConversation:
        check_conversation_id(conversation_id, param="conversation_id")
        if not await self._store.delete(conversation_id):
            raise _not_found(conversation_id)
        self._cache.pop(conversation_id, None)
        return DeletedConversation(id=conversation_id)

    async def add_items(
        self, conversation_id: str, request: AddItemsRequest
    ) -> ConversationItemList:
        check_conversation_id(conversation_id, param="conversation_id")
        items = await self._new_items(request.items)
        try:
            await self._store.add_items(conversation_id, _rows(items))
        except DuplicateItemError as exc:
            raise exc.at(_item_param(items, exc.item_id)) from None
        first, last = items[0].id, items[-1].id
        assert first is not None
        assert last is not None
        return ConversationItemList(data=items, first_id=first, last_id=last)

    async def list_items(self, conversation_id: str, query: ItemQuery) -> ListPage[StoredItem]:
        check_conversation_id(conversation_id, param="conversation_id")
        page = await self._store.list_items(
            conversation_id, after=query.after, limit=query.limit, order=query.order
        )
        if page is None:
            raise _not_found(conversation_id)
        items = parse_items(page.data)
        return ListPage[StoredItem](
            data=list(items),
            first_id=page.data[0].id if page.data else None,
            last_id=page.data[-1].id if page.data else None,
            has_more=page.has_more,
        )

    async def get_item(self, conversation_id: str, item_id: str) -> StoredItem:
        await self._row(conversation_id)
        row = await self._store.get_item(conversation_id, item_id)
        if row is None:
            raise _item_not_found(conversation_id, item_id)
        return STORED_ITEM.validate_json(row.body)

    async def delete_item(self, conversation_id: str, item_id: str) -> Conversation:
        """Remove an item; answers the conversation, as OpenAI does."""
        check_conversation_id(conversation_id, param="conversation_id")
        if not await self._store.delete_item(conversation_id, item_id):
            raise _item_not_found(conversation_id, item_id)
        return await self.get(conversation_id)

    # --- responses on a conversation ---------------------------------------------------------

    async def begin_turn(self, conversation_id: str, response_id: str) -> Turn:
        """Lock the conversation for ``response_id`` and read its history (cached by version)."""
        check_conversation_id(conversation_id, param="conversation")
        try:
            version = await self._store.lock(conversation_id, response_id)
        except NotFoundError:
            raise NotFoundError(
                f"Conversation with id '{conversation_id}' not found.", param="conversation"
            ) from None
        context = self._cached(conversation_id, version)
        if context is None:
            context = await self._context(conversation_id)
            self._remember(conversation_id, version, context)
        return Turn(conversation_id, response_id, version, context)

    async def peek(self, conversation_id: str) -> Context:
        """The conversation's history, read without taking its lock."""
        check_conversation_id(conversation_id, param="conversation")
        row = await self._store.get(conversation_id)
        if row is None:
            raise NotFoundError(
                f"Conversation with id '{conversation_id}' not found.", param="conversation"
            )
        context = self._cached(conversation_id, row.version)
        if context is None:
            context = await self._context(conversation_id)
        return context

    async def check_new(self, turn: Turn, items: Sequence[StoredItem], *, param: str) -> None:
        """The new input of a turn may not reuse the id of an item of any conversation."""
        ids = [item.id for item in items if item.id is not None]
        in_history = {item.id for item in turn.context.items}
        taken = [i for i in ids if i in in_history] or await self._store.taken(ids)
        if taken:
            index = ids.index(taken[0])
            raise DuplicateItemError(taken[0], param=f"{param}[{index}].id")

    async def release(self, turn: Turn) -> None:
        """Unlock without appending anything (the response never ran, or failed)."""
        with anyio.CancelScope(shield=True):
            await self._store.end_turn(turn_row(turn, ()))

    async def end_turn(self, turn: Turn, after: Context) -> None:
        """Append what ``after`` adds to the turn's history, and unlock: for a response that is
        not stored (a stored one ends its turn in its final write, then calls :meth:`ended`)."""
        with anyio.CancelScope(shield=True):
            await self._store.end_turn(turn_row(turn, appended(turn, after)))
        self.ended(turn, after)

    def ended(self, turn: Turn, after: Context) -> None:
        """The turn ended with the conversation now at ``after`` (one version later when it
        added items): the next turn needs no reading back."""
        if appended(turn, after):
            self._remember(turn.conversation_id, turn.version + 1, after)

    # --- internals ---------------------------------------------------------------------------

    async def _row(self, conversation_id: str) -> ConversationRow:
        check_conversation_id(conversation_id, param="conversation_id")
        row = await self._store.get(conversation_id)
        if row is None:
            raise _not_found(conversation_id)
        return row

    async def _context(self, conversation_id: str) -> Context:
        items = parse_items(await self._store.items(conversation_id))
        return Context.of(items, self._reader, await self._attachments.resolve(items))

    async def _new_items(self, items: Sequence[InputItem]) -> list[StoredItem]:
        return await stored_items(self._finder, items, param="items", for_conversation=True)

    def _cached(self, conversation_id: str, version: int) -> Context | None:
        cached = self._cache.get(conversation_id)
        if cached is None or cached[0] != version:
            return None
        self._cache.move_to_end(conversation_id)
        return cached[1]

    def _remember(self, conversation_id: str, version: int, context: Context) -> None:
        self._cache[conversation_id] = (version, context)
        self._cache.move_to_end(conversation_id)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)


def appended(turn: Turn, after: Context) -> tuple[StoredItem, ...]:
    """The items a turn adds: what ``after`` has beyond the turn's history."""
    return after.items[len(turn.context.items) :]


def turn_row(turn: Turn, items: Sequence[StoredItem]) -> ConversationTurn:
    """How the store ends ``turn``: ``items`` added in order, the lock released."""
    return ConversationTurn(
        conversation_id=turn.conversation_id,
        response_id=turn.response_id,
        items=_rows(items),
        created_at=time.time(),
    )


def _conversation(row: ConversationRow) -> Conversation:
    return Conversation(
        id=row.id, created_at=int(row.created_at), metadata=json.loads(row.metadata)
    )


def _rows(items: Sequence[StoredItem]) -> list[ItemRow]:
    rows: list[ItemRow] = []
    for item in items:
        assert item.id is not None, "items get their id before they are stored"
        rows.append(ItemRow(id=item.id, body=item.model_dump_json()))
    return rows


def _item_param(items: Sequence[StoredItem], item_id: str) -> str:
    index = next((i for i, item in enumerate(items) if item.id == item_id), 0)
    return f"items[{index}].id"


def _not_found(conversation_id: str) -> NotFoundError:
    return NotFoundError(
        f"Conversation with id '{conversation_id}' not found.", param="conversation_id"
    )


def _item_not_found(conversation_id: str, item_id: str) -> NotFoundError:
    return NotFoundError(
        f"Item with id '{item_id}' not found in conversation '{conversation_id}'.",
        param="item_id",
    )
