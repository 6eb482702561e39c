"""The HTTP server span of every request, with tracing on (:mod:`agentloom.tracing`).

A pure ASGI middleware, installed only when traces are exported: it continues the caller's W3C
``traceparent``, keeps the span current while the request is answered (a stream's task
inherits it), names it ``METHOD /route/template`` once the router has matched, and answers the
W3C ``traceresponse`` header (``00-<trace id>-<span id>-<flags>``), so a client can quote the
trace of any answer.
"""

from __future__ import annotations

from typing import Final

from opentelemetry import context, trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentloom.tracing import Tracing

__all__ = ["TRACE_HEADER", "TracingMiddleware"]

TRACE_HEADER: Final = b"traceresponse"
_INCOMING: Final = frozenset({b"traceparent", b"tracestate"})


class TracingMiddleware:
    def __init__(self, app: ASGIApp, tracing: Tracing) -> None:
        self.app = app
        self.tracing = tracing

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        tracing = self.tracing
        method: str = scope["method"]
        carrier, attributes = _read_headers(scope)
        parent = tracing.incoming(carrier) if carrier else None
        span = tracing.start(method, attributes, kind=SpanKind.SERVER, parent=parent)
        header = (TRACE_HEADER, tracing.traceresponse(span).encode("ascii"))
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message = {**message, "headers": [*message.get("headers", []), header]}
            await send(message)

        token = context.attach(trace.set_span_in_context(span))
        try:
            await self.app(scope, receive, sending)
        except BaseException as exc:
            tracing.failed(span, exc)
            raise
        finally:
            context.detach(token)
            _ended(span, scope, method, status)


def _read_headers(scope: Scope) -> tuple[dict[str, str], dict[str, str | int]]:
    """The caller's trace headers, and the request's attributes, in one pass over headers."""
    carrier: dict[str, str] = {}
    attributes: dict[str, str | int] = {
        "http.request.method": scope["method"],
        "url.path": scope["path"],
        "url.scheme": scope.get("scheme", "http"),
    }
    client = scope.get("client")
    if client:
        attributes["client.address"] = client[0]
    for key, value in scope["headers"]:
        if key in _INCOMING:
            carrier[key.decode("latin-1")] = value.decode("latin-1")
        elif key == b"user-agent":
            attributes["user_agent.original"] = value.decode("latin-1")[:256]
    return carrier, attributes


def _ended(span: trace.Span, scope: Scope, method: str, status: int) -> None:
    route = getattr(scope.get("route"), "path", None)
    if route is not None:
        span.update_name(f"{method} {route}")
        span.set_attribute("http.route", route)
    span.set_attribute("http.response.status_code", status)
    if status >= 500:
        span.set_status(Status(StatusCode.ERROR))
    span.end()
