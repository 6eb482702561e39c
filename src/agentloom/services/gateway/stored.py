"""Chat completions kept with ``store: true``: list, retrieve, update, delete, and the messages of
each one's request, as OpenAI serves them (``client.chat.completions.*``), a project's each.

The gateway hands over the answer as the client got it (a streamed one assembled from its
chunks by :class:`Assembled`) with the request; it is stored under the id the client saw. A
stored completion reads back with its ``metadata``.
"""

from __future__ import annotations

import json
import time
from typing import Any

from agentloom import json_codec
from agentloom.api.chat_completions import (
    ChatCompletionRequest,
    StoredCompletionDeleted,
    StoredCompletionList,
    StoredMessageList,
)
from agentloom.errors import InvalidRequestError, NotFoundError
from agentloom.storage.base import Order
from agentloom.storage.chat_completions import (
    CompletionQuery,
    SqlChatCompletionStore,
    StoredCompletionRow,
)

__all__ = ["Assembled", "StoredCompletions"]


class StoredCompletions:
    def __init__(self, store: SqlChatCompletionStore) -> None:
        self._store = store

    async def keep(self, request: ChatCompletionRequest, answer: dict[str, Any]) -> None:
        """Store ``answer`` (its ``id`` the one the client saw) with ``request``'s messages."""
        row = StoredCompletionRow(
            id=str(answer["id"]),
            created_at=float(answer.get("created") or time.time()),
            model=request.model,
            metadata=json.dumps(request.metadata or {}),
            body=json_codec.dumps(answer).decode(),
            messages=json.dumps(request.messages),
        )
        await self._store.insert(row)

    async def get(self, completion_id: str) -> dict[str, Any]:
        return _completion(await self._row(completion_id))

    async def list(self, query: CompletionQuery) -> StoredCompletionList:
        page = await self._store.list_page(query)
        if page is None:
            raise _not_found(query.after or "", param="after")
        data = [_completion(row) for row in page.data]
        first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
        return StoredCompletionList(data=data, first_id=first, last_id=last, has_more=page.has_more)

    async def update(self, completion_id: str, metadata: dict[str, str] | None) -> dict[str, Any]:
        if not await self._store.set_metadata(completion_id, json.dumps(metadata or {})):
            raise _not_found(completion_id)
        return await self.get(completion_id)

    async def delete(self, completion_id: str) -> StoredCompletionDeleted:
        if not await self._store.delete(completion_id):
            raise _not_found(completion_id)
        return StoredCompletionDeleted(id=completion_id)

    async def messages(
        self, completion_id: str, *, after: str | None, limit: int, order: Order
    ) -> StoredMessageList:
        """The request's messages, each with an id (``<completion id>-<position>``)."""
        row = await self._row(completion_id)
        messages = [_message(completion_id, n, m) for n, m in enumerate(json.loads(row.messages))]
        if order == "desc":
            messages.reverse()
        start = 0
        if after is not None:
            ids = [m["id"] for m in messages]
            if after not in ids:
                raise InvalidRequestError(
                    f"No message '{after}' in chat completion '{completion_id}'.", param="after"
                )
            start = ids.index(after) + 1
        data = messages[start : start + limit]
        first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
        more = start + limit < len(messages)
        return StoredMessageList(data=data, first_id=first, last_id=last, has_more=more)

    async def _row(self, completion_id: str) -> StoredCompletionRow:
        row = await self._store.get(completion_id)
        if row is None:
            raise _not_found(completion_id)
        return row


class Assembled:
    """A streamed chat completion put together from its chunks, as the whole answer would have
    been: each choice's role, content, refusal, tool calls (their argument pieces joined) and
    finish reason, and the usage of the last chunk."""

    def __init__(self) -> None:
        self._head: dict[str, Any] = {}
        self._choices: dict[int, dict[str, Any]] = {}
        self._usage: object = None

    def add(self, chunk: dict[str, Any]) -> None:
        for key in ("id", "created", "model", "system_fingerprint", "service_tier"):
            if key in chunk and key not in self._head:
                self._head[key] = chunk[key]
        if chunk.get("usage") is not None:
            self._usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            if isinstance(choice, dict):
                self._choice(choice)

    def completion(self) -> dict[str, Any]:
        choices = [self._choices[index] for index in sorted(self._choices)]
        for choice in choices:
            calls = choice["message"].pop("tool_calls", None)
            if calls:
                choice["message"]["tool_calls"] = [calls[i] for i in sorted(calls)]
        return {
            **self._head,
            "object": "chat.completion",
            "choices": choices,
            "usage": self._usage,
        }

    def _choice(self, choice: dict[str, Any]) -> None:
        index = int(choice.get("index") or 0)
        kept = self._choices.setdefault(
            index,
            {
                "index": index,
                "message": {"role": "assistant", "content": None},
                "finish_reason": None,
                "logprobs": None,
            },
        )
        if choice.get("finish_reason") is not None:
            kept["finish_reason"] = choice["finish_reason"]
        delta = choice.get("delta")
        if isinstance(delta, dict):
            _merge(kept["message"], delta)


def _merge(message: dict[str, Any], delta: dict[str, Any]) -> None:
    if delta.get("role"):
        message["role"] = delta["role"]
    for key in ("content", "refusal"):
        piece = delta.get(key)
        if isinstance(piece, str):
            message[key] = (message.get(key) or "") + piece
    for call in delta.get("tool_calls") or ():
        if not isinstance(call, dict):
            continue
        calls = message.setdefault("tool_calls", {})
        kept = calls.setdefault(
            int(call.get("index") or 0),
            {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
        )
        kept["id"] = call.get("id") or kept["id"]
        function = call.get("function")
        if isinstance(function, dict):
            kept["function"]["name"] += function.get("name") or ""
            kept["function"]["arguments"] += function.get("arguments") or ""


def _completion(row: StoredCompletionRow) -> dict[str, Any]:
    body = json_codec.loads(row.body)
    assert isinstance(body, dict), "a stored chat completion is a JSON object"
    return {**body, "metadata": json.loads(row.metadata)}


def _message(completion_id: str, position: int, message: dict[str, Any]) -> dict[str, Any]:
    """A request message as OpenAI lists it: its id; text content as ``content``, and the
    parts too when it came as parts (``content_parts``)."""
    content = message.get("content")
    shown = {**message, "id": f"{completion_id}-{position}"}
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        shown["content"] = "".join(t for t in texts if isinstance(t, str)) or None
        shown["content_parts"] = content
    else:
        shown["content_parts"] = None
    return shown


def _not_found(completion_id: str, param: str = "completion_id") -> NotFoundError:
    return NotFoundError(f"No chat completion found with id '{completion_id}'.", param=param)
