"""The Conversations API's wire models: conversations and the bodies that create and change them."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentloom.api.items import InputItem, StoredItem
from agentloom.api.metadata import Metadata
from agentloom.api.wire import WireModel

MAX_ITEMS_PER_CALL = 20  # as OpenAI: items added by one create or one items.create call


class Conversation(WireModel):
    id: str
    object: Literal["conversation"] = "conversation"
    created_at: int
    metadata: dict[str, str] = Field(default_factory=dict)


class DeletedConversation(WireModel):
    id: str
    object: Literal["conversation.deleted"] = "conversation.deleted"
    deleted: bool = True


class CreateConversationRequest(WireModel):
    items: list[InputItem] | None = Field(default=None, max_length=MAX_ITEMS_PER_CALL)
    metadata: Metadata | None = None


class UpdateConversationRequest(WireModel):
    metadata: Metadata | None


class AddItemsRequest(WireModel):
    items: list[InputItem] = Field(min_length=1, max_length=MAX_ITEMS_PER_CALL)


class ConversationItemList(WireModel):
    """The items an ``items.create`` call added (never empty: ``first_id`` and ``last_id`` are
    always strings, as OpenAI's ``ConversationItemList`` requires)."""

    object: Literal["list"] = "list"
    data: list[StoredItem]
    first_id: str
    last_id: str
    has_more: bool = False
