"""What a managed agent's stream sends, in OpenJarvis's format.

* ``data:`` frames shaped as Chat Completions chunks (``chat.completion.chunk``): the reply's
  text in ``choices[0].delta.content`` as the model writes it, and a last chunk with
  ``finish_reason: "stop"`` and the turn's ``usage``;
* ``event: tool_calls`` with the calls of a model turn, before its tools run;
* ``event: tool_result`` with each tool's output as it ends;
* ``data: {"error": ...}`` when the turn failed after the stream began;

and ``data: [DONE]`` at the end.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentloom.api.errors import ErrorEnvelope
from agentloom.api.wire import Nullable, WireModel

TOOL_CALLS = "tool_calls"  # the event names
TOOL_RESULT = "tool_result"


class ChunkDelta(WireModel):
    content: str | None = None
    reasoning_content: str | None = None  # the model's reasoning, as vLLM streams it


class ChunkChoice(WireModel):
    index: int = 0
    delta: ChunkDelta = Field(default_factory=ChunkDelta)
    finish_reason: Nullable[Literal["stop"]] = None


class ChunkUsage(WireModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class AgentChunk(WireModel):
    id: str
    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    created: int
    model: str
    choices: list[ChunkChoice]
    usage: ChunkUsage | None = None


class StreamedFunction(WireModel):
    name: str
    arguments: str


class StreamedToolCall(WireModel):
    id: str
    type: Literal["function"] = "function"
    function: StreamedFunction


class ToolCallsEvent(WireModel):
    """``event: tool_calls``: the calls one model turn made."""

    object: Literal["managed_agent.tool_calls"] = "managed_agent.tool_calls"
    tool_calls: list[StreamedToolCall]


class ToolResultEvent(WireModel):
    """``event: tool_result``: one call's output (OpenJarvis's ``tool``, ``success``,
    ``latency`` and ``result``)."""

    object: Literal["managed_agent.tool_result"] = "managed_agent.tool_result"
    tool_call_id: str
    tool: str
    arguments: str
    result: str
    success: bool
    latency: float  # milliseconds


AgentStreamData = AgentChunk | ToolCallsEvent | ToolResultEvent | ErrorEnvelope
"""The ``data`` of any frame of the stream but ``[DONE]`` (for the OpenAPI document)."""
