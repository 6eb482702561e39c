"""A conversation history kept between runs: messages as JSON and back, and trimming.

:func:`message_to_json` / :func:`message_from_json` keep every field of a
:class:`~agentloom.llm.types.Message`: tool calls, the tool message's call id and name, reasoning
text and Responses reasoning items (their encrypted content too: a stateless replay needs it;
the JSON is data at rest, never logged). :func:`trim_history` bounds a history without splitting
a tool-call group (an assistant message with tool calls and the tool messages answering it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from agentloom.errors import AgentloomError
from agentloom.json_types import JSONObject, JSONValue
from agentloom.llm.types import (
    Content,
    ImageContent,
    Message,
    MessageToolCall,
    ReasoningItem,
    Role,
    TextContent,
)

__all__ = [
    "SessionDataError",
    "history_from_json",
    "history_to_json",
    "message_from_json",
    "message_to_json",
    "parse_json",
    "trim_history",
]


class SessionDataError(AgentloomError):
    """What the session file holds cannot be read back (not written by this version?)."""


# --- messages as JSON ------------------------------------------------------------------------


class _StoredCall(BaseModel):
    model_config = ConfigDict(extra="forbid")
    call_id: str
    name: str
    arguments: str = "{}"


class _StoredReasoning(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    summary: list[str] = []
    encrypted_content: str | None = None
    item: dict[str, Any] = {}


class _StoredPart(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["text", "image"]
    text: str | None = None
    url: str | None = None
    detail: Literal["low", "high", "auto"] = "auto"


class _StoredMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Role
    content: str | list[_StoredPart] | None = None
    tool_calls: list[_StoredCall] = []
    tool_call_id: str | None = None
    name: str | None = None
    reasoning: str | None = None
    reasoning_items: list[_StoredReasoning] = []


def message_to_json(message: Message) -> JSONObject:
    """``message`` as a JSON object (fields at their defaults left out)."""
    data: JSONObject = {"role": message.role}
    if message.content is not None:
        data["content"] = _content_json(message.content)
    optional: dict[str, str | None] = {
        "tool_call_id": message.tool_call_id,
        "name": message.name,
        "reasoning": message.reasoning,
    }
    data.update({key: value for key, value in optional.items() if value is not None})
    if message.tool_calls:
        data["tool_calls"] = [
            {"call_id": c.call_id, "name": c.name, "arguments": c.arguments}
            for c in message.tool_calls
        ]
    if message.reasoning_items:
        data["reasoning_items"] = [_reasoning_json(item) for item in message.reasoning_items]
    return data


def _content_json(content: str | tuple[Content, ...]) -> JSONValue:
    if isinstance(content, str):
        return content
    return [
        {"type": "text", "text": p.text}
        if isinstance(p, TextContent)
        else {"type": "image", "url": p.url, "detail": p.detail}
        for p in content
    ]


def _content(stored: str | list[_StoredPart] | None) -> str | tuple[Content, ...] | None:
    if stored is None or isinstance(stored, str):
        return stored
    return tuple(
        TextContent(p.text or "") if p.type == "text" else ImageContent(p.url or "", p.detail)
        for p in stored
    )


def _reasoning_json(item: ReasoningItem) -> JSONObject:
    data: JSONObject = {"id": item.id, "summary": list(item.summary), "item": dict(item.item)}
    if item.encrypted_content is not None:
        data["encrypted_content"] = item.encrypted_content
    return data


def message_from_json(data: JSONValue) -> Message:
    """The message :func:`message_to_json` wrote; :class:`SessionDataError` if it is not one."""
    try:
        stored = _StoredMessage.model_validate(data)
        return _message(stored)
    except (ValidationError, ValueError) as exc:
        raise SessionDataError(f"a stored message is not valid: {exc}") from None


def _message(stored: _StoredMessage) -> Message:
    return Message(
        role=stored.role,
        content=_content(stored.content),
        tool_calls=tuple(
            MessageToolCall(c.call_id, c.name, c.arguments) for c in stored.tool_calls
        ),
        tool_call_id=stored.tool_call_id,
        name=stored.name,
        reasoning=stored.reasoning,
        reasoning_items=tuple(
            ReasoningItem(r.id, tuple(r.summary), r.encrypted_content, r.item)
            for r in stored.reasoning_items
        ),
    )


def history_to_json(history: Sequence[Message]) -> str:
    return json.dumps([message_to_json(m) for m in history], ensure_ascii=False)


def history_from_json(text: str) -> tuple[Message, ...]:
    value = parse_json(text)
    if not isinstance(value, list):
        raise SessionDataError("a stored history is not a JSON array")
    return tuple(message_from_json(item) for item in value)


def parse_json(text: str) -> JSONValue:
    """``text`` as JSON; :class:`SessionDataError` when it is not."""
    try:
        value: JSONValue = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SessionDataError(f"stored session data is not JSON: {exc.msg}") from None
    return value


def trim_history(history: Sequence[Message], max_messages: int) -> list[Message]:
    """The latest messages of ``history``, at most ``max_messages`` where possible, starting at
    a user message (a turn's start) or else at the first message that is not a tool result, so
    no tool-call group is cut in two. A history whose last group alone is longer is kept from
    that group's start."""
    if max_messages < 1:
        raise ValueError("max_messages must be at least 1")
    messages = list(history)
    if len(messages) <= max_messages:
        return messages
    earliest = len(messages) - max_messages
    for start in range(earliest, len(messages)):
        if messages[start].role == "user":
            return messages[start:]
    for start in range(earliest, len(messages)):
        if messages[start].role != "tool":
            return messages[start:]
    for start in range(earliest - 1, -1, -1):  # only tool results in the window: their call
        if messages[start].role != "tool":
            return messages[start:]
    return messages
