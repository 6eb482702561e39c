"""Per-call generation options, shared by both paths."""

from __future__ import annotations

from dataclasses import dataclass

from agentloom.inference.base import ResponseFormat, ToolChoice

__all__ = ["CallOptions"]


@dataclass(frozen=True, slots=True)
class CallOptions:
    temperature: float | None = None
    top_p: float | None = None
    max_output_tokens: int | None = None
    reasoning_effort: str | None = None
    tool_choice: ToolChoice | None = None
    parallel_tool_calls: bool | None = None
    response_format: ResponseFormat = "text"
