"""``GET /v1/responses/{response_id}/trace`` (an agentloom extension): a stored response's run
as a timeline of spans, for a waterfall (see docs/observability.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentloom.api.wire import WireModel
from agentloom.timeline import AttributeValue, EntryKind


class TraceSpan(WireModel):
    """One step of the run: times in milliseconds from the run's start."""

    name: str = Field(
        description="`invoke_agent {model}`, `chat {model}`, `execute_tool {name}` ..."
    )
    kind: EntryKind
    start_ms: float
    duration_ms: float
    status: Literal["ok", "error"]
    error: str | None = Field(default=None, description="The error's type, when it failed.")
    attributes: dict[str, AttributeValue] = Field(default_factory=dict)


class ResponseTrace(WireModel):
    object: Literal["response.trace"] = "response.trace"
    response_id: str
    trace_id: str | None = Field(
        default=None, description="The OpenTelemetry trace of the run, when traces were on."
    )
    started_at: float = Field(description="When the run started, in unix seconds.")
    duration_ms: float
    truncated: bool = Field(description="Spans were left out: a run keeps 256 at most.")
    spans: list[TraceSpan] = Field(description="The run first, then each step in start order.")
