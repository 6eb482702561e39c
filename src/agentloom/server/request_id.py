"""The ``x-request-id`` header on every HTTP response, as OpenAI sets it.

The edge (:mod:`agentloom.server.edge`) adds it as the answer starts, so streamed (SSE)
responses and error pages get it too and nothing is buffered. A sane id the client sent in
``x-request-id`` or ``x-client-request-id`` is echoed back, so a client's logs and ours share
it; otherwise a fresh ``req_<hex>`` is made.

Starlette answers an unhandled exception from outside every middleware, so the id is also kept
in the request's state, where that handler finds it (:func:`headers_for`).
"""

from __future__ import annotations

import re
from typing import Final

from starlette.types import Scope

from agentloom.ids import new_id
from agentloom.logs import set_request_id

__all__ = ["HEADER", "assign", "headers_for", "request_id", "stamped"]

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


def assign(scope: Scope) -> bytes:
    """Choose the id of this HTTP request, keep it in its state and its log lines; the
    header's value."""
    chosen = request_id(scope["headers"])
    scope.setdefault("state", {})[_STATE_KEY] = chosen
    set_request_id(chosen)
    return chosen.encode("ascii")


def stamped(headers: list[tuple[bytes, bytes]], value: bytes) -> list[tuple[bytes, bytes]]:
    """An answer's headers with ``x-request-id: value`` (replacing one the app set itself)."""
    kept = [(k, v) for k, v in headers if k.lower() != HEADER]
    kept.append((HEADER, value))
    return kept
