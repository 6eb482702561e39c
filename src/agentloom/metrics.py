"""Prometheus metrics, served at ``GET /metrics`` in the text exposition format.

One registry per app (so several apps in one process, as in the tests, keep their own counts).
The HTTP layer counts every request by method, route template and status, with its duration and
the requests in flight (``agentloom.server.http_metrics``); the usage ledger counts what every
model call, response and embeddings request used (:meth:`Metrics.counted`), in the same place as
the project's usage records, so no route can forget it; the responses service times responses
and their first token and model calls; the safety service counts verdicts; ingestion counts
files and chunks; what the database holds (pools, the job queue) is read when scraped. Names are
``agentloom_*`` (docs/metrics.md). Label values are bounded: route templates, served model ids,
provider names, shield ids, statuses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from agentloom.metric_kinds import Counter, Family, Gauge, Histogram, Registry
from agentloom.storage.jobs import QueueStat
from agentloom.storage.runner import PoolUse
from agentloom.storage.usage import UsageCounts

__all__ = ["CONTENT_TYPE", "Metrics"]

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
        self.registry = Registry()
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
        ).labels()
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
        self._responses(registry)
        self._work(registry)

    def _responses(self, registry: CollectorRegistry) -> None:
        self.response_seconds = Histogram(
            "agentloom_response_duration_seconds",
            "Time from a response's start to its end (its stored final state), by model.",
            ["model"],
            buckets=_SECONDS,
            registry=registry,
        )
        self.first_token_seconds = Histogram(
            "agentloom_time_to_first_token_seconds",
            "Time from a response's start to its first output text, by model.",
            ["model"],
            buckets=_SECONDS,
            registry=registry,
        )
        self.responses_in_flight = Gauge(
            "agentloom_responses_in_flight",
            "Responses running in this process (foreground and background).",
            registry=registry,
        ).labels()
        self.streams_open = Gauge(
            "agentloom_streams_open",
            "Event streams being sent: SSE answers and WebSocket connections.",
            ["transport"],
            registry=registry,
        )
        self.model_seconds = Histogram(
            "agentloom_model_request_duration_seconds",
            "Time of one model call, from the request to the answer's end, by provider and model.",
            ["provider", "model", "outcome"],
            buckets=_SECONDS,
            registry=registry,
        )
        self.tool_seconds = Histogram(
            "agentloom_server_tool_call_duration_seconds",
            "Time of one server tool call, by tool and outcome (the call item's status, or"
            " blocked by a guardrail).",
            ["tool", "outcome"],
            buckets=_SECONDS,
            registry=registry,
        )
        self.guardrail_verdicts = Counter(
            "agentloom_guardrail_verdicts",
            "Shield verdicts (allowed, flagged, error), by shield.",
            ["shield", "verdict"],
            registry=registry,
        )

    def _work(self, registry: CollectorRegistry) -> None:
        self.pool_connections = Gauge(
            "agentloom_db_pool_connections",
            "Database connections of this process's pools, in use or idle.",
            ["pool", "state"],
            registry=registry,
        )
        self.jobs = Gauge(
            "agentloom_jobs",
            "Background jobs in the database (every process's), queued or running, by kind.",
            ["kind", "status"],
            registry=registry,
            shared=True,
        )
        self.oldest_queued = Gauge(
            "agentloom_job_oldest_queued_seconds",
            "Age of the oldest queued job, by kind (0 when none waits).",
            ["kind"],
            registry=registry,
            shared=True,
        )
        self.loop_tasks = Gauge(
            "agentloom_event_loop_tasks",
            "Tasks on this process's event loop when scraped (a leak shows as growth).",
            registry=registry,
        ).labels()
        self.retention_deleted = Counter(
            "agentloom_retention_deleted",
            "Rows the retention sweeps run by this process deleted, by kind ([retention]).",
            ["kind"],
            registry=registry,
        )
        self.files_ingested = Counter(
            "agentloom_vector_store_files_ingested",
            "Vector store files ingested by this process, by outcome (completed, failed).",
            ["status"],
            registry=registry,
        )
        self.chunks_embedded = Counter(
            "agentloom_vector_store_chunks_embedded",
            "Chunks of vector store files embedded and stored by this process.",
            registry=registry,
        ).labels()
        self.ingestion_seconds = Histogram(
            "agentloom_vector_store_ingestion_seconds",
            "Time to ingest one file (parse, chunk, embed, store).",
            buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800),
            registry=registry,
        ).labels()

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
        """One HTTP request answered."""
        method = method if method in _METHODS else "other"
        self.http_requests.labels(method, route, str(status)).inc()
        self.http_seconds.labels(method, route).observe(seconds)

    def response_ended(self, model: str, status: str) -> None:
        self.responses.labels(model, status).inc()

    def response_done(self, model: str, seconds: float) -> None:
        self.response_seconds.labels(model).observe(seconds)

    def first_token(self, model: str, seconds: float) -> None:
        self.first_token_seconds.labels(model).observe(seconds)

    def model_called(self, provider: str, model: str, seconds: float, ok: bool) -> None:
        self.model_seconds.labels(provider, model, "ok" if ok else "error").observe(seconds)

    def tool_called(self, tool: str, outcome: str, seconds: float) -> None:
        self.tool_seconds.labels(tool, outcome).observe(seconds)

    def verdict(self, shield: str, verdict: str) -> None:
        self.guardrail_verdicts.labels(shield, verdict).inc()

    def swept(self, kind: str, rows: int) -> None:
        """A retention sweep deleted ``rows`` rows of ``kind``."""
        self.retention_deleted.labels(kind).inc(rows)

    def ingested(self, status: str, chunks: int, seconds: float) -> None:
        self.files_ingested.labels(status).inc()
        if chunks:
            self.chunks_embedded.inc(chunks)
        self.ingestion_seconds.observe(seconds)

    def read_state(self, pools: Sequence[PoolUse], queue: Sequence[QueueStat], tasks: int) -> None:
        """What the process and the database hold right now (at a scrape): pools, the job
        queue, the event loop's tasks."""
        self.loop_tasks.set(tasks)
        for use in pools:
            self.pool_connections.labels(use.pool, "in_use").set(use.in_use)
            self.pool_connections.labels(use.pool, "idle").set(use.idle)
        for family in (self.jobs, self.oldest_queued):
            family.clear()  # kinds that no longer have jobs show no series
        for stat in queue:
            self.jobs.labels(stat.kind, stat.status).set(stat.count)
            if stat.status == "queued":
                self.oldest_queued.labels(stat.kind).set(stat.oldest_age)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)

    def families(self) -> list[Family]:
        return list(self.registry.families)
