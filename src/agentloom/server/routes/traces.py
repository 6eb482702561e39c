"""``/v1/traces`` (agentloom extensions): the Agents SDK's trace exporter posts its traces and
spans to ``/v1/traces/ingest`` with the project's key; they are listed (all, or those of one
response) and read back with their spans (:mod:`agentloom.services.sdk_traces`)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from agentloom.api.lists import ListPage
from agentloom.api.sdk_traces import SdkTrace, TraceIngest, TraceIngested
from agentloom.errors import InvalidRequestError
from agentloom.server.body import parse_body
from agentloom.server.query import limit_param, optional_param, order_param
from agentloom.server.render import json_response
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import PAGE, ApiRoute, Op, Param
from agentloom.services.sdk_traces import SdkTraces
from agentloom.storage.sdk_traces import SdkTraceQuery


def _traces(request: Request) -> SdkTraces:
    traces = runtime_of(request).sdk_traces
    if traces is None:
        raise InvalidRequestError("This server does not keep traces.")
    return traces


async def ingest(request: Request) -> Response:
    body = await parse_body(request, TraceIngest)
    return json_response(await _traces(request).ingest(body))


async def list_traces(request: Request) -> Response:
    params = request.query_params
    query = SdkTraceQuery(
        after=optional_param(params, "after"),
        limit=limit_param(params),
        order=order_param(params),
        response_id=optional_param(params, "response_id"),
    )
    return json_response(await _traces(request).list(query))


async def retrieve_trace(request: Request) -> Response:
    return json_response(await _traces(request).get(str(request.path_params["trace_id"])))


_BY_RESPONSE = Param("response_id", {"type": "string"}, "Only traces with a span of this response.")

routes = [
    ApiRoute(
        "/v1/traces/ingest",
        POST=Op(
            ingest,
            body=TraceIngest,
            returns=TraceIngested,
            summary="Keep the traces and spans the Agents SDK's exporter sends",
        ),
    ),
    ApiRoute(
        "/v1/traces",
        GET=Op(
            list_traces,
            returns=ListPage[SdkTrace],
            query=(*PAGE, _BY_RESPONSE),
            summary="The Agents SDK's traces (newest first), without their spans",
        ),
    ),
    ApiRoute("/v1/traces/{trace_id}", GET=Op(retrieve_trace, returns=SdkTrace)),
]
