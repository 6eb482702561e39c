"""The edge every HTTP request and WebSocket passes on its way in: its request id
(:mod:`~agentloom.server.request_id`), its metrics and access log line
(:mod:`~agentloom.server.http_metrics`), its admission and project
(:mod:`~agentloom.server.auth`), the audit log's record of a change to a project's data
(:mod:`~agentloom.server.changes`), and the headers its answer gets (``x-request-id``, the
``x-ratelimit-*`` of a request admitted against limits). A request of the traffic the request
log keeps (:func:`~agentloom.request_entry.logged_endpoint`) gets its entry here, is refused
when its project is over its spend limit (:class:`~agentloom.services.organization.budgets.
Budgets`), and its entry goes to the usage ledger once its answer has been sent.

One pure ASGI middleware, so streamed responses pass untouched and error pages (a refusal
included) get the same headers and are counted too; one wrapper around ``send``, where three
middlewares cost three calls and three copies of the headers for every message of a stream.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentloom.errors import AgentloomError
from agentloom.metrics import Metrics
from agentloom.request_entry import RequestEntry, logged_endpoint, logging_request
from agentloom.server import request_id
from agentloom.server.auth import Admission, admit, refuse
from agentloom.server.changes import changed_resource, run_logged
from agentloom.server.http_metrics import RequestWatch, websocket_open
from agentloom.server.runtime import Runtime
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
        endpoint = logged_endpoint(scope["method"], scope["path"])
        if endpoint is not None:
            entry = RequestEntry.opened(stamp.decode("ascii"), endpoint)
            with logging_request(entry):
                try:
                    await self._answer(scope, receive, send, stamp, entry)
                finally:
                    _logged(scope, entry)
            return
        await self._answer(scope, receive, send, stamp)

    async def _answer(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        stamp: bytes,
        entry: RequestEntry | None = None,
    ) -> None:
        watch = RequestWatch(self.metrics)
        with noting_rates() as rates:

            async def sending(message: Message) -> None:
                if message["type"] == "http.response.start":
                    headers = request_id.stamped(message.get("headers", []), stamp)
                    if rates.limit is not None:
                        headers += rate_headers(rates)
                    watch.answered(message["status"], headers)
                    if entry is not None:
                        entry.status = message["status"]
                    message = {**message, "headers": headers}
                await send(message)

            try:
                await self._admitted(scope, receive, sending, entry)
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

    async def _admitted(
        self, scope: Scope, receive: Receive, send: Send, entry: RequestEntry | None = None
    ) -> None:
        """The app, run as the request's project; or the refusal."""
        try:
            admission = await admit(scope)
            if admission is not None and entry is not None:
                _within_budget(scope, admission, entry)
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


def _within_budget(scope: Scope, admission: Admission, entry: RequestEntry) -> None:
    """Note who the logged request is; refuse it when its project is over its spend limit."""
    entry.project_id = admission.project
    entry.key_id = admission.principal.key_id
    runtime = scope["app"].state.runtime
    assert isinstance(runtime, Runtime), "admitted: the runtime is open"
    runtime.budgets.check(admission.project)


def _logged(scope: Scope, entry: RequestEntry) -> None:
    """The request was answered: its row goes to the ledger (written with the next flush)."""
    entry.ended(entry.status)
    runtime = getattr(scope["app"].state, "runtime", None)
    if isinstance(runtime, Runtime):
        runtime.usage.log(entry)
