"""``truncation: "auto"``: drop the oldest turns until the context fits.

A turn is a user message and everything up to the next user message, so an assistant tool call is
never separated from its tool results. System messages and the last turn are always kept.
Token counts are estimated (about four characters a token) when the backend's context window is
known; otherwise the backend's own context-length error triggers a drop and a retry.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentloom.inference.base import ChatMessage
from agentloom.inference.estimate import CHARS_PER_TOKEN as CHARS_PER_TOKEN
from agentloom.inference.estimate import MESSAGE_OVERHEAD_TOKENS as MESSAGE_OVERHEAD_TOKENS
from agentloom.inference.estimate import estimate_tokens as estimate_tokens


def drop_oldest_turn(messages: Sequence[ChatMessage]) -> list[ChatMessage] | None:
    """The messages without their oldest non-system turn; ``None`` if nothing can be dropped."""
    starts = [i for i, m in enumerate(messages) if m.role == "user"]
    body = [i for i, m in enumerate(messages) if m.role != "system"]
    if len(starts) < 2 or not body:
        return _drop_leading_non_user(messages)
    first, second = starts[0], starts[1]
    first = min(first, body[0])
    return [m for i, m in enumerate(messages) if not (first <= i < second and m.role != "system")]


def _drop_leading_non_user(messages: Sequence[ChatMessage]) -> list[ChatMessage] | None:
    # Only one user turn: drop assistant/tool messages that come before it, if any.
    starts = [i for i, m in enumerate(messages) if m.role == "user"]
    if not starts:
        return None
    head = [i for i in range(starts[0]) if messages[i].role != "system"]
    if not head:
        return None
    return [m for i, m in enumerate(messages) if i not in head]


def fit_to_window(
    messages: Sequence[ChatMessage], window: int, reserve: int
) -> list[ChatMessage] | None:
    """Drop oldest turns until the estimate fits ``window - reserve``; ``None`` if it can't."""
    current = list(messages)
    while estimate_tokens(current) > window - reserve:
        shorter = drop_oldest_turn(current)
        if shorter is None:
            return None
        current = shorter
    return current
