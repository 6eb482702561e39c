"""Several methods on one path, in one endpoint."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

Endpoint = Callable[[Request], Awaitable[Response]]


def by_method(**handlers: Endpoint) -> Endpoint:
    """One endpoint for several methods of a path, so that a 405 names all of them in ``Allow``
    (Starlette answers a wrong method with the first route of the path alone). ``HEAD`` is
    answered as ``GET`` when the path has a ``GET``."""
    if "GET" in handlers:
        handlers.setdefault("HEAD", handlers["GET"])

    async def endpoint(request: Request) -> Response:
        return await handlers[request.method](request)

    return endpoint


def endpoint_app(endpoint: Endpoint) -> ASGIApp:
    """The route's ASGI app: the endpoint's answer to the request, sent. Its exceptions go to
    the app's handlers (:class:`~agentloom.server.handled.HandledErrors`), which answer them
    as Starlette's per-route wrapper did: that wrapper (a closure, two coroutines and a ``send``
    of its own for every request) applied the same handlers one level further in."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        response = await endpoint(Request(scope, receive, send))
        await response(scope, receive, send)

    return app
