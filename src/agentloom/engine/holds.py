"""A response's hold on the conversation it runs on, as the engine sees it.

A response with ``conversation`` takes the conversation's lock before it reads the history; the
engine needs only the few calls below of whoever keeps conversations
(:class:`agentloom.services.conversations.ConversationsService`), declared here so that the
engine does not depend on the service.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from agentloom.api.items import StoredItem
from agentloom.engine.context import Context
from agentloom.frozen import frozen


@frozen
class Turn:
    """A response's hold on a conversation: the history it sees, at ``version``."""

    conversation_id: str
    response_id: str
    version: int
    context: Context


class ConversationHolds(Protocol):
    """Taking, checking and letting go of a conversation's lock."""

    async def begin_turn(self, conversation_id: str, response_id: str) -> Turn:
        """Lock the conversation for ``response_id`` and read its history."""
        ...

    async def peek(self, conversation_id: str) -> Context:
        """The conversation's history, read without taking its lock."""
        ...

    async def check_new(self, turn: Turn, items: Sequence[StoredItem], *, param: str) -> None:
        """The new input of a turn may not reuse the id of an item of any conversation."""
        ...

    async def release(self, turn: Turn) -> None:
        """Unlock without appending anything."""
        ...
