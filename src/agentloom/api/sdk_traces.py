"""``/v1/traces`` (agentloom extensions): what the Agents SDK's trace exporter sends to
``POST /v1/traces/ingest`` (its traces and spans, OpenAI's ``traces=v1`` shape), and the traces
listed and read back (docs/observability.md)."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import Field

from agentloom.api.wire import Nullable, WireModel

Fields: TypeAlias = dict[str, object]  # (``object`` is a field name in the models below)
MAX_INGESTED = 1000
"""The most traces and spans one ingest may carry (the SDK sends batches of at most 128)."""


class IngestedTrace(WireModel):
    """A trace as the SDK exports it when it starts."""

    object: Literal["trace"] = "trace"
    id: str = Field(min_length=1, max_length=96)
    workflow_name: str | None = Field(default=None, max_length=512)
    group_id: str | None = Field(default=None, max_length=256)
    metadata: Fields | None = None


class SdkSpan(WireModel):
    """A span as the SDK exports it when it ends; ``span_data.type`` says what it was (``agent``,
    ``response``, ``generation``, ``function``, ``handoff``, ``guardrail``, ``custom`` ...), and
    a ``response`` span names the response (``span_data.response_id``)."""

    object: Literal["trace.span"] = "trace.span"
    id: str = Field(min_length=1, max_length=96)
    trace_id: str = Field(min_length=1, max_length=96)
    parent_id: Nullable[str] = None
    started_at: Nullable[str] = Field(default=None, description="ISO 8601.")
    ended_at: Nullable[str] = Field(default=None, description="ISO 8601.")
    span_data: Fields = Field(default_factory=dict)
    error: Nullable[Fields] = None
    metadata: Fields | None = None


class TraceIngest(WireModel):
    """The exporter's body: ``{"data": [trace or span, ...]}``."""

    data: list[Annotated[IngestedTrace | SdkSpan, Field(discriminator="object")]] = Field(
        max_length=MAX_INGESTED
    )


class TraceIngested(WireModel):
    object: Literal["trace.ingest"] = "trace.ingest"
    traces: int
    spans: int


class SdkTrace(WireModel):
    """A trace the Agents SDK exported; ``spans`` only when it is read by its id."""

    object: Literal["trace"] = "trace"
    id: str
    created_at: int = Field(description="When it arrived, in unix seconds.")
    workflow_name: Nullable[str] = None
    group_id: Nullable[str] = None
    metadata: Fields = Field(default_factory=dict)
    spans: list[SdkSpan] | None = None
