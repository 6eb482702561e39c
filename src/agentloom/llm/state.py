"""Conversation state for the Responses path's stateful mode.

In stateful mode the server keeps the history: each call sends only the messages added since the
last one, with ``previous_response_id``. The state remembers that id and how many of the
conversation's messages the server already holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentloom.errors import InvalidRequestError

__all__ = ["ConversationState", "LLMStateError", "StateMode"]

from typing import Literal

StateMode = Literal["stateless", "stateful"]


class LLMStateError(InvalidRequestError):
    """A conversation's state cannot be used the way a call asks (e.g. stateful on chat)."""


@dataclass
class ConversationState:
    previous_response_id: str | None = None
    sent: int = 0  # messages of the conversation already held by the server
    model: str | None = None

    @property
    def stateful(self) -> bool:
        return self.previous_response_id is not None

    def reset(self) -> None:
        """Forget the server-side history: the next call replays everything."""
        self.previous_response_id = None
        self.sent = 0
        self.model = None

    def advance(self, response_id: str | None, sent: int, model: str) -> None:
        self.previous_response_id = response_id
        self.sent = sent
        self.model = model
