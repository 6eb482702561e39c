"""Several methods on one path, in one endpoint."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

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
