"""What one client may hold of the server: deadlines on a request's head and body, and a most
connections a process keeps open.

uvicorn waits as long as a client likes for a request's line and headers and for its body, and
takes every connection offered: clients sending a header byte a second hold their connections
for good, and enough of them use up the process's file descriptors. The protocol here (uvicorn's
httptools protocol, with :class:`~agentloom.server.coalesce.CoalescingHttpToolsProtocol`'s joined
writes) bounds each, from ``[server]``:

- ``header_timeout``: a request's head must be in within this many seconds of its first byte
  (of the connection's opening, for its first request); else the connection is closed;
- ``body_idle_timeout`` and ``body_timeout``: no byte of the body for the first, or not all of
  it within the second, and the answer is a 408 and the connection closed (the idle clock starts
  again when the server, not the client, paused reading: a large body waiting to be read);
- ``max_connections``: past this many open in the process, a new connection gets a 503 and is
  closed before its request is read.

Idle keep-alive connections are uvicorn's own ``timeout_keep_alive`` (``[server]
keep_alive_timeout``).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import math
from http import HTTPStatus
from typing import Any

from agentloom.config import ServerSettings
from agentloom.frozen import frozen
from agentloom.server.coalesce import CoalescingHttpToolsProtocol
from agentloom.server.errors import envelope

__all__ = ["ConnectionLimits", "GuardedHttpToolsProtocol", "guarded_protocol"]

log = logging.getLogger(__name__)

REFUSALS_LOGGED_EVERY = 10.0  # seconds: connections refused past the maximum, one line at most
BODY_LATE = "The request body did not arrive within {:g} seconds."
BODY_IDLE = "No byte of the request body arrived for {:g} seconds."


@frozen
class ConnectionLimits:
    header_timeout: float
    body_idle_timeout: float
    body_timeout: float
    max_connections: int

    @classmethod
    def of(cls, server: ServerSettings) -> ConnectionLimits:
        return cls(
            header_timeout=server.header_timeout,
            body_idle_timeout=server.body_idle_timeout,
            body_timeout=server.body_timeout,
            max_connections=server.max_connections,
        )


def guarded_protocol(server: ServerSettings) -> Any:
    """The protocol for ``uvicorn.run(..., http=...)``: a partial, which pickles (each worker
    process of ``--workers`` gets it), where a class made here would not."""
    return functools.partial(GuardedHttpToolsProtocol, limits=ConnectionLimits.of(server))


class _Refusals:
    """Connections refused past the maximum, counted and logged at most once in a while: a
    flood of connections must not become a flood of log lines."""

    def __init__(self) -> None:
        self.count = 0
        self.logged_at = -math.inf

    def note(self, now: float, limit: int) -> None:
        self.count += 1
        if now - self.logged_at >= REFUSALS_LOGGED_EVERY:
            log.warning(
                "refused %d connection(s) past [server] max_connections = %d", self.count, limit
            )
            self.count, self.logged_at = 0, now


_REFUSALS = _Refusals()  # the process's


class GuardedHttpToolsProtocol(CoalescingHttpToolsProtocol):
    """uvicorn's httptools protocol under :class:`ConnectionLimits`."""

    def __init__(self, *args: Any, limits: ConnectionLimits, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limits = limits
        self._head_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._body_began = 0.0
        self._body_seen = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            self._refuse()
        else:
            self._arm_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head()
        self._stop_body()
        super().connection_lost(exc)

    # the head

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._head_timer is None and self._between_requests():
            # bytes that begin no request (blank lines) end uvicorn's keep-alive wait: the
            # head's deadline runs instead, or they would hold the connection for good
            self._arm_head()

    def _between_requests(self) -> bool:
        """No request is being read or answered (and the connection is still this protocol's:
        an upgrade to a WebSocket takes it out of ``connections``)."""
        idle = self.cycle is None or self.cycle.response_complete
        return idle and self._body_timer is None and self in self.connections

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._head_timer is None:
            self._arm_head()

    def on_headers_complete(self) -> None:
        self._stop_head()
        super().on_headers_complete()
        if not (self.parser.should_upgrade() and self._should_upgrade()):
            self._body_began = self._body_seen = self.loop.time()
            self._arm_body(self._body_began)

    def _arm_head(self) -> None:
        self._head_timer = self.loop.call_later(self.limits.header_timeout, self._head_due)

    def _stop_head(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_due(self) -> None:
        self._head_timer = None
        if self.cycle is not None and not self.cycle.response_complete:
            self._arm_head()  # a pipelined head behind a running answer: cut it when that ends
            return
        log.debug("closing a connection from %s: no request head in time", self.client)
        self.transport.close()

    # the body

    def on_body(self, body: bytes) -> None:
        super().on_body(body)
        self._body_seen = self.loop.time()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._stop_body()

    def _arm_body(self, now: float) -> None:
        due = min(
            self._body_seen + self.limits.body_idle_timeout,
            self._body_began + self.limits.body_timeout,
        )
        self._body_timer = self.loop.call_later(max(due - now, 0.0), self._body_due)

    def _stop_body(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _body_due(self) -> None:
        self._body_timer = None
        now, limits = self.loop.time(), self.limits
        if self.flow.read_paused or self.cycle.waiting_for_100_continue:
            self._body_seen = now  # the server is not reading (yet): the client is not late
        elif now >= self._body_began + limits.body_timeout:
            self._body_late(BODY_LATE.format(limits.body_timeout))
            return
        elif now >= self._body_seen + limits.body_idle_timeout:
            self._body_late(BODY_IDLE.format(limits.body_idle_timeout))
            return
        self._arm_body(now)

    def _body_late(self, message: str) -> None:
        """A 408 when no answer has begun (else the connection alone is closed); the app's
        request then reads as disconnected."""
        cycle = self.cycle
        if not cycle.response_started:
            self.transport.write(self._answer(HTTPStatus.REQUEST_TIMEOUT, message))
            log.debug("answered 408 to %s: %s", self.client, message)
        cycle.disconnected = not cycle.response_complete
        cycle.message_event.set()
        self.transport.close()

    # refusals

    def _refuse(self) -> None:
        _REFUSALS.note(self.loop.time(), self.limits.max_connections)
        message = (
            "The server has too many open connections; try again shortly "
            f"(at most {self.limits.max_connections})."
        )
        self.transport.write(self._answer(HTTPStatus.SERVICE_UNAVAILABLE, message))
        self.transport.close()

    def _answer(self, status: HTTPStatus, message: str) -> bytes:
        """A whole answer, written past the app: the error envelope, and the connection closes."""
        kind, code = _KINDS[status]
        body = json.dumps(envelope(message, type=kind, code=code)).encode()
        head = [f"HTTP/1.1 {status.value} {status.phrase}\r\n".encode()]
        defaults = self.server_state.default_headers  # date, server
        head += [name + b": " + value + b"\r\n" for name, value in defaults]
        head.append(
            b"content-type: application/json\r\n"
            + f"content-length: {len(body)}\r\n".encode()
            + b"connection: close\r\n\r\n"
        )
        return b"".join(head) + body


_KINDS = {
    HTTPStatus.REQUEST_TIMEOUT: ("invalid_request_error", "request_timeout"),
    HTTPStatus.SERVICE_UNAVAILABLE: ("server_error", "too_many_connections"),
}
