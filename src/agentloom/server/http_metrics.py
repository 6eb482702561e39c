"""Every HTTP request counted and timed (:mod:`agentloom.metrics`), and its access log line when
asked (:mod:`agentloom.logs`)."""

from __future__ import annotations

import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentloom.logs import ACCESS, access
from agentloom.metrics import Metrics

__all__ = ["MetricsMiddleware"]


class MetricsMiddleware:
    """Counts and times every HTTP request (a pure ASGI middleware: streams pass untouched)."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500  # what the client gets when nothing was sent (an error page replaces it)
        start = time.perf_counter()
        streams = None  # the open-streams gauge, once the answer is an event stream

        async def sending(message: Message) -> None:
            nonlocal status, streams
            if message["type"] == "http.response.start":
                status = message["status"]
                if _event_stream(message):
                    streams = self.metrics.streams_open.labels("sse")
                    streams.inc()
            await send(message)

        metrics = self.metrics
        metrics.in_flight.inc()
        try:
            await self.app(scope, receive, sending)
        finally:
            metrics.in_flight.dec()
            if streams is not None:
                streams.dec()
            route = scope.get("route")
            path = getattr(route, "path", None) or "unmatched"
            seconds = time.perf_counter() - start
            metrics.answered(scope["method"], path, status, seconds)
            if ACCESS.isEnabledFor(logging.INFO):
                access(scope["method"], scope["path"], status, seconds)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        connections = self.metrics.streams_open.labels("websocket")
        connections.inc()
        try:
            await self.app(scope, receive, send)
        finally:
            connections.dec()


def _event_stream(start: Message) -> bool:
    return any(
        key == b"content-type" and value.startswith(b"text/event-stream")
        for key, value in start.get("headers", ())
    )
