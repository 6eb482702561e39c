"""The conversation a ``previous_response_id`` continues: its chain of items, parsed once.

Reading a chain back is one recursive query, but parsing every item of a 50-turn chain again on
every turn (and converting it to chat messages) makes turn 50 cost more than turn 1. Finished
responses are immutable, so the items of recently finished chains are kept parsed, with their
chat messages built, in a bounded LRU; a hit costs one existence check
(the response may have been deleted, possibly by another server process) and no parsing. A
delete through this process clears the cache, since the deleted response may sit inside any
cached chain; a delete through another process is seen only for the response itself.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field

from agentloom.api.items import STORED_ITEMS, StoredItem
from agentloom.engine.attachments import Attachment, Attachments
from agentloom.engine.messages import ChatHistory, SummaryReader, visible
from agentloom.errors import NotFoundError
from agentloom.frozen import frozen
from agentloom.storage.base import ItemRow, ResponseStore

DEFAULT_CACHE_SIZE = 1024


@frozen
class Context:
    """Items the model sees before a request's own input, with their chat messages built.
    ``chat`` is never changed in place: :meth:`extended` copies it."""

    items: tuple[StoredItem, ...] = ()
    chat: ChatHistory = field(default_factory=ChatHistory)

    @classmethod
    def of(
        cls,
        items: Sequence[StoredItem],
        reader: SummaryReader,
        files: Mapping[str, Attachment] | None = None,
    ) -> Context:
        """The context of items already accepted (``files``: what their file ids name)."""
        return cls.empty(reader).extended(items, files=files)

    @classmethod
    def empty(cls, reader: SummaryReader) -> Context:
        return cls((), ChatHistory(reader=reader))

    def extended(
        self,
        items: Sequence[StoredItem],
        *,
        param: str | None = None,
        files: Mapping[str, Attachment] | None = None,
    ) -> Context:
        """This context followed by ``items`` (errors in them name ``param[i]``; ``files`` is
        what their file ids name). A compaction item among them changes what is seen of the
        earlier items: the chat is built again."""
        if not items:
            return self
        every = (*self.items, *items)
        known = {**self.chat.files, **(files or {})}
        if any(item.type == "compaction" for item in items):
            return Context(every, _built(every, self.chat.reader, len(self.items), param, known))
        chat = self.chat.copy()
        chat.files = known
        chat.extend(items, param=param)
        return Context(every, chat)


@frozen
class _Unbuilt:
    """A chain kept as the context it continued and what it added, not extended yet."""

    start: Context
    added: Callable[[], Sequence[StoredItem]]  # made when a request continues the chain


def _built(
    items: Sequence[StoredItem],
    reader: SummaryReader,
    first_new: int,
    param: str | None,
    files: dict[str, Attachment],
) -> ChatHistory:
    chat = ChatHistory(reader=reader, files=files)
    for index in visible(items, reader, first_new=first_new):
        new = param is not None and index >= first_new
        chat.add(items[index], param=f"{param}[{index - first_new}]" if new else None)
    return chat


def parse_items(rows: Sequence[ItemRow]) -> tuple[StoredItem, ...]:
    """Stored item rows, parsed in one go."""
    if not rows:
        return ()
    return tuple(STORED_ITEMS.validate_json("[" + ",".join(r.body for r in rows) + "]"))


class History:
    def __init__(
        self,
        store: ResponseStore,
        reader: SummaryReader,
        *,
        cache_size: int = DEFAULT_CACHE_SIZE,
        attachments: Attachments | None = None,
    ) -> None:
        self._store = store
        self._reader = reader
        self._attachments = attachments or Attachments()
        self._cache: OrderedDict[str, Context | _Unbuilt] = OrderedDict()
        self._size = cache_size

    async def load(self, response_id: str | None) -> Context:
        """Every item of the chain ending at ``response_id`` (its inputs and outputs), oldest
        first; 404 ``previous_response_not_found`` if it does not exist."""
        if response_id is None:
            return Context.empty(self._reader)
        cached = self._cache.get(response_id)
        if cached is not None and await self._store.exists(response_id):
            self._cache.move_to_end(response_id)
            if isinstance(cached, _Unbuilt):
                cached = self._cache[response_id] = cached.start.extended(cached.added())
            return cached
        rows = await self._store.history(response_id)
        if rows is None:
            self.forget(response_id)
            raise _not_found(response_id)
        items = parse_items(rows)
        return Context.of(items, self._reader, await self._attachments.resolve(items))

    def remember(
        self,
        response_id: str,
        chain: Context,
        added: Callable[[], Sequence[StoredItem]] | None = None,
    ) -> None:
        """Keep the whole chain of a finished, stored response: ``chain`` followed by the items
        ``added()`` makes, made (and their chat messages built) when a request continues it:
        most responses are never continued."""
        self._cache[response_id] = chain if added is None else _Unbuilt(chain, added)
        self._cache.move_to_end(response_id)
        while len(self._cache) > self._size:
            self._cache.popitem(last=False)

    def forget(self, response_id: str) -> None:
        self._cache.pop(response_id, None)

    def clear(self) -> None:
        """Drop every cached chain (a deleted response may be part of any of them)."""
        self._cache.clear()


def _not_found(response_id: str) -> NotFoundError:
    return NotFoundError(
        f"Previous response with id '{response_id}' not found.",
        param="previous_response_id",
        code="previous_response_not_found",
    )
