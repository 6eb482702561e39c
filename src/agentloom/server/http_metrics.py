"""Every HTTP request counted and timed (:mod:`agentloom.metrics`) when metrics are on, and its
access log line when asked (:mod:`agentloom.logs`): what the edge (:mod:`agentloom.server.edge`)
keeps of one request while it runs."""

from __future__ import annotations

import logging
import time

from starlette.types import Scope

from agentloom.logs import ACCESS, access
from agentloom.metric_kinds import GaugeValue
from agentloom.metrics import Metrics

__all__ = ["RequestWatch", "websocket_open"]


class RequestWatch:
    """One HTTP request: in flight from its start, its status once the answer starts (an
    event stream held open in the gauge until it ends), counted and logged when it ends."""

    __slots__ = ("_metrics", "_start", "_status", "_stream")

    def __init__(self, metrics: Metrics | None) -> None:
        self._metrics = metrics
        self._start = time.perf_counter()
        self._status = 500  # what the client gets when nothing was sent (an error page replaces it)
        self._stream: GaugeValue | None = None
        if metrics is not None:
            metrics.in_flight.inc()

    def answered(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        """The answer starts with ``status`` and ``headers``."""
        self._status = status
        if self._metrics is not None and _event_stream(headers):
            self._stream = self._metrics.streams_open.labels("sse")
            self._stream.inc()

    def ended(self, scope: Scope) -> None:
        seconds = time.perf_counter() - self._start
        metrics = self._metrics
        if metrics is not None:
            metrics.in_flight.dec()
            if self._stream is not None:
                self._stream.dec()
            route = scope.get("route")
            path = getattr(route, "path", None) or "unmatched"
            metrics.answered(scope["method"], path, self._status, seconds)
        if ACCESS.isEnabledFor(logging.INFO):
            access(scope["method"], scope["path"], self._status, seconds)


def websocket_open(metrics: Metrics | None) -> GaugeValue | None:
    """The open-WebSockets gauge, counting one more (``None`` without metrics)."""
    if metrics is None:
        return None
    connections = metrics.streams_open.labels("websocket")
    connections.inc()
    return connections


def _event_stream(headers: list[tuple[bytes, bytes]]) -> bool:
    return any(
        key == b"content-type" and value.startswith(b"text/event-stream") for key, value in headers
    )
