"""The ASGI application: routes, error handlers and the lifespan that opens the runtime."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect

from agentloom.config import Settings
from agentloom.errors import AgentloomError
from agentloom.inference.base import Provider
from agentloom.metrics import Metrics
from agentloom.retrieval.embeddings import Embedder
from agentloom.server import banner, errors, process
from agentloom.server.edge import EdgeMiddleware
from agentloom.server.routes import (
    batches,
    chat_completions,
    console,
    containers,
    conversations,
    docs,
    embeddings,
    files,
    health,
    ledger,
    managed_agents,
    mcp_connectors,
    messages,
    models,
    organization,
    people,
    prompts,
    request_log,
    responses,
    safety,
    signin,
    traces,
    vector_stores,
    webhooks,
    websocket,
)
from agentloom.server.routes import metrics as metrics_routes
from agentloom.server.routing import IndexedRouter
from agentloom.server.runtime import open_runtime, start_tasks
from agentloom.tracing import Tracing, activate, enabled_by_environment


def create_app(
    settings: Settings,
    *,
    providers: Mapping[str, Provider] | None = None,
    embedder: Embedder | None = None,
    serving: bool = False,
    tracing: Tracing | None = None,
) -> Starlette:
    """Build the app. ``providers`` replaces the configured ones, ``embedder`` the configured
    embedder (tests, embedding). ``serving``: this process serves the app and nothing else
    (``agentloom serve``): once started, what it has loaded leaves the garbage collector's
    view and threads take turns sooner (:func:`agentloom.server.process.settle`).
    ``tracing``: where spans go; by default OTLP/HTTP when the ``OTEL_*`` variables ask for it
    (:mod:`agentloom.tracing`), else none."""

    metrics = Metrics() if settings.server.metrics else None
    if tracing is None and enabled_by_environment():
        tracing = Tracing.from_environment()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        opened = open_runtime(settings, providers=providers, embedder=embedder, metrics=metrics)
        activate(tracing)
        try:
            async with opened as runtime:
                app.state.runtime = runtime
                # ... and an attribute of its own, found at once: Starlette's State answers
                # from its dict only after a miss, an AttributeError made and dropped (six
                # times a request)
                object.__setattr__(app.state, "runtime", runtime)
                async with anyio.create_task_group() as tasks:
                    start_tasks(tasks, runtime)
                    if serving:
                        banner.announce(settings, runtime)
                        process.settle()
                    yield
                    await runtime.jobs.drain()  # finish or hand back background responses
                    tasks.cancel_scope.cancel()
        finally:
            activate(None)
            if tracing is not None:
                await anyio.to_thread.run_sync(tracing.shutdown)  # the last spans exported

    middleware = [Middleware(EdgeMiddleware, metrics=metrics)]
    if tracing is not None:
        from agentloom.server.tracing import TracingMiddleware

        middleware.insert(0, Middleware(TracingMiddleware, tracing=tracing))

    app = Starlette(
        middleware=middleware,
        exception_handlers={
            AgentloomError: errors.handle_agentloom_error,
            HTTPException: errors.handle_http_exception,
            ClientDisconnect: errors.handle_client_disconnect,
            Exception: errors.handle_unexpected,
        },
    )
    app.router = IndexedRouter(
        [
            *responses.routes,
            *chat_completions.routes,
            *messages.routes,
            *embeddings.routes,
            *websocket.routes,
            *conversations.routes,
            *prompts.routes,
            *files.routes,
            *vector_stores.routes,
            *containers.routes,
            *models.routes,
            *health.routes,
            *organization.routes,
            *people.routes,
            *ledger.routes,
            *request_log.routes,
            *safety.routes,
            *webhooks.routes,
            *batches.routes,
            *managed_agents.routes,
            *metrics_routes.routes,
            *traces.routes,
            *mcp_connectors.routes,
            *docs.routes,
            *console.routes,
            *signin.routes,
        ],
        lifespan=lifespan,
    )
    return app
