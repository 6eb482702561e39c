"""The edge every HTTP request and WebSocket passes on its way in: its request id
(:mod:`~agentloom.server.request_id`), its metrics and access log line
(:mod:`~agentloom.server.http_metrics`), its admission and project
(:mod:`~agentloom.server.auth`), the audit log's record of a change to a project's data
(:mod:`~agentloom.server.changes`), and the headers its answer gets (``x-request-id``, the
``x-ratelimit-*`` of a request admitted against limits).

One pure ASGI middleware, so streamed responses pass untouched and error pages (a refusal
included) get the same headers and are counted too; one wrapper around ``send``, where three
middlewares cost three calls and three copies of the headers for every message of a stream.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentloom.errors import AgentloomError
from agentloom.metrics import Metrics
from agentloom.server import request_id
from agentloom.server.auth import admit, refuse
from agentloom.server.changes import changed_resource, run_logged
from agentloom.server.http_metrics import RequestWatch, websocket_open
from agentloom.services.organization.rate_limits import noting_rates, rate_headers

__all__ = ["EdgeMiddleware"]


class EdgeMiddleware:
    def __init__(self, app: ASGIApp, metrics: Metrics | None = None) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "websocket":
            await self._websocket(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        stamp = request_id.assign(scope)
        watch = RequestWatch(self.metrics)
        with noting_rates() as rates:

            async def sending(message: Message) -> None:
                if message["type"] == "http.response.start":
                    headers = request_id.stamped(message.get("headers", []), stamp)
                    if rates.limit is not None:
                        headers += rate_headers(rates)
                    watch.answered(message["status"], headers)
                    message = {**message, "headers": headers}
                await send(message)

            try:
                await self._admitted(scope, receive, sending)
            finally:
                watch.ended(scope)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        connections = websocket_open(self.metrics)
        try:
            with noting_rates():
                await self._admitted(scope, receive, send)
        finally:
            if connections is not None:
                connections.dec()

    async def _admitted(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The app, run as the request's project; or the refusal."""
        try:
            admission = await admit(scope)
        except AgentloomError as exc:
            await refuse(exc, scope, receive, send)
            return
        if admission is None:
            await self.app(scope, receive, send)
            return
        resource = changed_resource(scope)
        with admission.acting():
            if resource is None:
                await self.app(scope, receive, send)
            else:  # a change to the project's data: logged with who made it
                audit = scope["app"].state.runtime.projects.audit
                await run_logged(self.app, resource, audit, scope, receive, send)
