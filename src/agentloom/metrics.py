"""Prometheus metrics, served at ``GET /metrics`` in the text exposition format.

One registry per app (so several apps in one process, as in the tests, keep their own counts).
The HTTP layer counts every request by method, route template and status, with its duration and
the requests in flight (:class:`MetricsMiddleware`); the usage ledger counts what every model
call, response and embeddings request used (:meth:`Metrics.counted`), in the same place as the
project's usage records, so no route can forget it. Names are ``agentloom_*``
(docs/metrics.md). Label values are bounded: route templates, served model ids, statuses.
"""

from __future__ import annotations

import logging
import time
from typing import Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentloom.logs import ACCESS, access
from agentloom.storage.usage import UsageCounts

__all__ = ["CONTENT_TYPE", "Metrics", "MetricsMiddleware"]

CONTENT_TYPE: Final = CONTENT_TYPE_LATEST
_SECONDS: Final = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
_TOKEN_KINDS: Final = (
    ("input", "input_tokens"),
    ("cached", "cached_tokens"),
    ("output", "output_tokens"),
    ("reasoning", "reasoning_tokens"),
    ("embedding", "embedding_tokens"),
)
_METHODS: Final = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})
_CALLS: Final = (
    ("file_search", "file_search_calls"),
    ("web_search", "web_search_calls"),
    ("mcp", "mcp_calls"),
    ("code_interpreter_session", "code_interpreter_sessions"),
)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        registry = self.registry
        self.http_requests = Counter(
            "agentloom_http_requests",
            "HTTP requests answered, by method, route template and status.",
            ["method", "route", "status"],
            registry=registry,
        )
        self.http_seconds = Histogram(
            "agentloom_http_request_duration_seconds",
            "Time from a request's arrival to the end of its answer (a stream's last byte).",
            ["method", "route"],
            buckets=_SECONDS,
            registry=registry,
        )
        self.in_flight = Gauge(
            "agentloom_http_requests_in_flight",
            "HTTP requests (streams included) being answered.",
            registry=registry,
        )
        self.responses = Counter(
            "agentloom_responses",
            "Responses ended, by model and final status.",
            ["model", "status"],
            registry=registry,
        )
        self.model_requests = Counter(
            "agentloom_model_requests",
            "Model calls made (responses' calls, Chat Completions), by model.",
            ["model"],
            registry=registry,
        )
        self.embedding_requests = Counter(
            "agentloom_embedding_requests",
            "Embeddings requests answered, by model.",
            ["model"],
            registry=registry,
        )
        self.tokens = Counter(
            "agentloom_tokens",
            "Tokens used, by model and kind (input, cached, output, reasoning, embedding).",
            ["model", "kind"],
            registry=registry,
        )
        self.tool_calls = Counter(
            "agentloom_server_tool_calls",
            "Server tool calls of ended responses, by tool.",
            ["tool"],
            registry=registry,
        )
        self._http_children: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}

    def counted(self, model: str, counts: UsageCounts) -> None:
        """What one call, response or embeddings request used (the usage ledger's counts)."""
        if counts.requests:
            self.model_requests.labels(model).inc(counts.requests)
        if counts.embedding_requests:
            self.embedding_requests.labels(model).inc(counts.embedding_requests)
        for kind, name in _TOKEN_KINDS:
            value = getattr(counts, name)
            if value:
                self.tokens.labels(model, kind).inc(value)
        for tool, name in _CALLS:
            value = getattr(counts, name)
            if value:
                self.tool_calls.labels(tool).inc(value)

    def answered(self, method: str, route: str, status: int, seconds: float) -> None:
        """One HTTP request answered (its label children looked up once per combination: the
        values are bounded, and this runs on every request)."""
        key = (method if method in _METHODS else "other", route, status)
        children = self._http_children.get(key)
        if children is None:
            method = key[0]
            children = (
                self.http_requests.labels(method, route, str(status)),
                self.http_seconds.labels(method, route),
            )
            self._http_children[key] = children
        children[0].inc()
        children[1].observe(seconds)

    def response_ended(self, model: str, status: str) -> None:
        self.responses.labels(model, status).inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class MetricsMiddleware:
    """Counts and times every HTTP request (a pure ASGI middleware: streams pass untouched)."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500  # what the client gets when nothing was sent (an error page replaces it)
        start = time.perf_counter()

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        metrics = self.metrics
        metrics.in_flight.inc()
        try:
            await self.app(scope, receive, sending)
        finally:
            metrics.in_flight.dec()
            route = scope.get("route")
            path = getattr(route, "path", None) or "unmatched"
            seconds = time.perf_counter() - start
            metrics.answered(scope["method"], path, status, seconds)
            if ACCESS.isEnabledFor(logging.INFO):
                access(scope["method"], scope["path"], status, seconds)
