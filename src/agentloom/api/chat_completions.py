"""What agentloom reads of a Chat Completions (``POST /v1/chat/completions``) or legacy
Completions (``POST /v1/completions``) request.

The request is passed to the backend as the client sent it, its ``model`` replaced by the
backend's own id: only the fields the gateway acts on are read and checked here. Everything else
(tools, ``response_format``, ``n``, logprobs, reasoning fields ...) is the backend's to judge.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, StrictBool

from agentloom.api.integers import Int32
from agentloom.api.metadata import Metadata
from agentloom.api.wire import Nullable, WireModel


class StreamOptions(WireModel):
    include_usage: StrictBool | None = None


class PassedRequest(WireModel):
    model: str = Field(min_length=1)
    stream: StrictBool | None = None
    stream_options: StreamOptions | None = None

    @property
    def wants_usage(self) -> bool:
        """The client asked for the usage chunk at the end of its stream."""
        return bool(self.stream_options and self.stream_options.include_usage)

    def new_input(self) -> str | None:
        """What the client says this turn, as text (``None``: not text, e.g. token ids)."""
        raise NotImplementedError


class ChatCompletionRequest(PassedRequest):
    messages: list[dict[str, Any]] = Field(min_length=1)
    store: StrictBool | None = None  # kept by agentloom (list, retrieve ...), not the backend
    metadata: Metadata | None = None  # a stored completion's, 16 pairs at most

    def new_input(self) -> str:
        """The user and tool messages after the last assistant message (the history before it
        was checked when it was new)."""
        texts: list[str] = []
        for message in reversed(self.messages):
            if message.get("role") == "assistant":
                break
            if message.get("role") in ("user", "tool"):
                texts.append(_text(message.get("content")))
        return "\n".join(reversed(texts))


class CompletionRequest(PassedRequest):
    prompt: str | list[str] | list[Int32] | list[list[Int32]]

    def new_input(self) -> str | None:
        if isinstance(self.prompt, str):
            return self.prompt
        if all(isinstance(part, str) for part in self.prompt):
            return "\n".join(str(part) for part in self.prompt)
        return None  # token ids


class StoredCompletionList(WireModel):
    """A page of stored chat completions (each OpenAI's ChatCompletion, with its metadata)."""

    object: Literal["list"] = "list"
    data: list[dict[str, Any]]
    first_id: Nullable[str]
    last_id: Nullable[str]
    has_more: bool


class StoredMessageList(WireModel):
    """A page of a stored completion's request messages, each with its ``id``."""

    object: Literal["list"] = "list"
    data: list[dict[str, Any]]
    first_id: Nullable[str]
    last_id: Nullable[str]
    has_more: bool


class UpdateStoredCompletionRequest(WireModel):
    metadata: Metadata | None  # required; null clears it


class StoredCompletionDeleted(WireModel):
    id: str
    object: Literal["chat.completion.deleted"] = "chat.completion.deleted"
    deleted: bool = True


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""
