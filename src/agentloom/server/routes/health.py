"""``/v1/health`` (liveness: the process answers, nothing is checked) and ``/v1/health/ready``
(readiness: each part the server depends on, probed; :mod:`agentloom.services.readiness`).
Both are open, with keys on too: load balancers and orchestrators call them."""

from __future__ import annotations

from functools import partial

from starlette.requests import Request
from starlette.responses import Response

from agentloom.api.lists import Health, Readiness, ReadinessCheck
from agentloom.server.render import json_response
from agentloom.server.runtime import Runtime, runtime_of
from agentloom.server.spec import ApiRoute, Op
from agentloom.services.readiness import (
    Checked,
    Probe,
    backend_probes,
    database_probe,
    mcp_probes,
    verdict,
    web_search_probes,
)

JOB_RUNNER = "job runner"  # the background duty the job runner check looks at


async def health(request: Request) -> Response:
    return json_response(Health())


async def ready(request: Request) -> Response:
    runtime = runtime_of(request)
    checks = await runtime.readiness.checked(partial(_probes, runtime))
    status = verdict(checks)
    body = Readiness(status=status, checks=[_check(c) for c in checks])
    return json_response(body, status_code=503 if status == "not_ready" else 200)


def _probes(runtime: Runtime) -> list[Probe]:
    settings = runtime.settings
    return [
        database_probe(runtime.database),
        *backend_probes(runtime.catalog),
        runtime.duties.probe(JOB_RUNNER, "job_runner"),
        *mcp_probes(settings.mcp.servers),
        *web_search_probes(settings.web_search),
    ]


def _check(found: Checked) -> ReadinessCheck:
    status = "ok" if found.error is None else "down"
    return ReadinessCheck(kind=found.kind, name=found.name, status=status, error=found.error)


routes = [
    ApiRoute(
        "/v1/health",
        GET=Op(health, returns=Health, open=True, summary="Whether the server is up"),
    ),
    ApiRoute(
        "/v1/health/ready",
        GET=Op(
            ready,
            returns=Readiness,
            open=True,
            summary="Whether the server can do its work now",
            description=(
                "Probes the database, each inference backend, the job runner and the declared"
                " MCP servers and web search sources. 200 when `ready` or `degraded` (some"
                " backends or tools down), 503 with the same body when `not_ready` (the"
                " database or the job runner down, or no backend reachable)."
            ),
        ),
    ),
]
