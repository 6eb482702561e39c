"""The ``x-request-id`` header on every HTTP response, as OpenAI sets it.

A pure ASGI middleware, so streamed (SSE) responses and error pages get the header too and
nothing is buffered. A sane id the client sent in ``x-request-id`` or ``x-client-request-id``
is echoed back, so a client's logs and ours share it; otherwise a fresh ``req_<hex>`` is made.

Starlette answers an unhandled exception from outside every middleware, so the id is also kept
in the request's state, where that handler finds it (:func:`headers_for`).
"""

from __future__ import annotations

import re
from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentloom.ids import new_id
from agentloom.logs import set_request_id

__all__ = ["HEADER", "RequestIdMiddleware", "headers_for", "request_id"]

HEADER: Final = b"x-request-id"
_INCOMING: Final = (HEADER, b"x-client-request-id")
_SANE: Final = re.compile(rb"[A-Za-z0-9][A-Za-z0-9._:\-]{0,127}")
_STATE_KEY: Final = "request_id"


def request_id(headers: list[tuple[bytes, bytes]]) -> str:
    """The id for a request with these (lower-cased) headers: the client's, if sane, else new."""
    for name in _INCOMING:
        for key, value in headers:
            if key == name and _SANE.fullmatch(value):
                return value.decode("ascii")
    return new_id("req")


def headers_for(scope: Scope) -> dict[str, str]:
    """The ``x-request-id`` header the middleware chose for this request (none outside it)."""
    value = scope.get("state", {}).get(_STATE_KEY)
    return {HEADER.decode(): value} if isinstance(value, str) else {}


class RequestIdMiddleware:
    """Adds ``x-request-id`` to every HTTP response (replacing one the app set itself)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        chosen = request_id(scope["headers"])
        scope.setdefault("state", {})[_STATE_KEY] = chosen
        set_request_id(chosen)  # for the request's log lines
        value = chosen.encode("ascii")

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() != HEADER]
                message = {**message, "headers": [*kept, (HEADER, value)]}
            await send(message)

        await self.app(scope, receive, send_with_id)
