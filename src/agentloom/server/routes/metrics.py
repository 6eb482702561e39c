"""``GET /metrics``: the Prometheus text exposition of :mod:`agentloom.metrics` (every
worker's, with ``--workers``: :mod:`agentloom.metrics_shared`). Open on a
server without keys; with ``[auth] mode = "keys"`` it needs the admin key (metrics name every
project's models)."""

from __future__ import annotations

import asyncio
import time

import anyio
from starlette.requests import Request
from starlette.responses import Response

from agentloom.errors import AuthenticationError, NotFoundError, PermissionDeniedError
from agentloom.metrics import CONTENT_TYPE
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import ApiRoute, Op


async def metrics(request: Request) -> Response:
    runtime = runtime_of(request)
    if runtime.settings.auth.keys:
        await _admin_only(request)
    if runtime.metrics is None:
        raise NotFoundError(
            "Metrics are off on this server ([server] metrics = false, AGENTLOOM_METRICS).",
            code="metrics_off",
        )
    database = runtime.database
    queue = await database.jobs.queue_stats(time.time())
    tasks = len(asyncio.all_tasks())
    runtime.metrics.read_state(database.runner.pools(), queue, tasks)
    shared = runtime.shared_metrics
    if shared is None:
        return Response(runtime.metrics.exposition(), media_type=CONTENT_TYPE)
    body = await anyio.to_thread.run_sync(shared.exposition)  # every worker's (a few files)
    return Response(body, media_type=CONTENT_TYPE)


async def _admin_only(request: Request) -> None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthenticationError("GET /metrics needs the admin key (Authorization: Bearer ...).")
    principal = await runtime_of(request).keys.verify(token.strip())
    if principal is None or not principal.is_admin:
        raise PermissionDeniedError("GET /metrics needs the admin key; this is not it.")


routes = [
    ApiRoute(
        "/metrics",
        GET=Op(
            metrics,
            content={"text/plain": {"type": "string"}},
            summary="Prometheus metrics (the admin key, when keys are on)",
        ),
    )
]
