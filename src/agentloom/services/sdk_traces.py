"""Traces the Agents SDK exports, kept per project: ingested as they come
(``POST /v1/traces/ingest``), listed (all, or those of one response) and read back with their
spans, the wire objects of :mod:`agentloom.api.sdk_traces`."""

from __future__ import annotations

import json
import time

from agentloom import json_codec
from agentloom.api.lists import ListPage
from agentloom.api.sdk_traces import IngestedTrace, SdkSpan, SdkTrace, TraceIngest, TraceIngested
from agentloom.errors import NotFoundError
from agentloom.storage.sdk_traces import SdkSpanRow, SdkTraceQuery, SdkTraceRow, SqlSdkTraceStore


class SdkTraces:
    def __init__(self, store: SqlSdkTraceStore) -> None:
        self._store = store

    async def ingest(self, body: TraceIngest) -> TraceIngested:
        now = time.time()
        traces = [_trace_row(t, now) for t in body.data if isinstance(t, IngestedTrace)]
        spans = [_span_row(s) for s in body.data if isinstance(s, SdkSpan)]
        await self._store.ingest(traces, spans)
        return TraceIngested(traces=len(traces), spans=len(spans))

    async def list(self, query: SdkTraceQuery) -> ListPage[SdkTrace]:
        page = await self._store.list_page(query)
        if page is None:
            raise NotFoundError(f"No trace found with id '{query.after}'.", param="after")
        return ListPage[SdkTrace].of([_trace(row) for row in page.data], has_more=page.has_more)

    async def get(self, trace_id: str) -> SdkTrace:
        found = await self._store.get(trace_id)
        if found is None:
            raise NotFoundError(f"No trace found with id '{trace_id}'.", param="trace_id")
        row, spans = found
        trace = _trace(row)
        trace.spans = [SdkSpan.model_validate_json(span.body) for span in spans]
        return trace


def _trace_row(trace: IngestedTrace, now: float) -> SdkTraceRow:
    return SdkTraceRow(
        id=trace.id,
        created_at=now,
        workflow_name=trace.workflow_name,
        group_id=trace.group_id,
        metadata=json_codec.dumps(trace.metadata or {}).decode(),
    )


def _span_row(span: SdkSpan) -> SdkSpanRow:
    response_id = span.span_data.get("response_id")
    return SdkSpanRow(
        id=span.id,
        trace_id=span.trace_id,
        response_id=response_id
        if isinstance(response_id, str) and len(response_id) <= 96
        else None,
        body=span.model_dump_json(),
    )


def _trace(row: SdkTraceRow) -> SdkTrace:
    return SdkTrace(
        id=row.id,
        created_at=int(row.created_at),
        workflow_name=row.workflow_name,
        group_id=row.group_id,
        metadata=json.loads(row.metadata),
    )
