"""What agentloom reads of a Chat Completions request (``POST /v1/chat/completions``).

The request is passed to the backend as the client sent it, its ``model`` replaced by the
backend's own id: only the fields the gateway acts on are read and checked here. Everything else
(tools, ``response_format``, ``n``, logprobs, reasoning fields ...) is the backend's to judge.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictBool

from agentloom.api.wire import WireModel


class StreamOptions(WireModel):
    include_usage: StrictBool | None = None


class ChatCompletionRequest(WireModel):
    model: str = Field(min_length=1)
    messages: list[dict[str, Any]] = Field(min_length=1)
    stream: StrictBool | None = None
    stream_options: StreamOptions | None = None

    @property
    def wants_usage(self) -> bool:
        """The client asked for the usage chunk at the end of its stream."""
        return bool(self.stream_options and self.stream_options.include_usage)
