"""Changes to a project's data, in the audit log: who (the key, its user or service account)
created, updated or deleted what.

A request that changes stored objects (a ``POST``, ``DELETE`` or ``PATCH`` under ``/v1`` that is
not a model call nor a search, nor the organization's routes, whose services log their own
entries) is logged once it has been answered with a 2xx: ``resource.created`` (a ``POST`` to a
collection; the new object's id read from the answer), ``resource.deleted`` or
``resource.updated``, with the resource (``files``, ``vector_stores`` ...) and the path. Making
a response or a chat completion is a model call, counted by the usage ledger, not logged here.
"""

from __future__ import annotations

import json
import logging
from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentloom.errors import DatabaseUnavailableError
from agentloom.services.organization.audit import AuditLog
from agentloom.tenancy import current_project

__all__ = ["changed_resource", "run_logged"]

logger = logging.getLogger(__name__)

MAX_BODY: Final = 64 * 1024  # an answer this long is not read for the new object's id
_CHANGING: Final = frozenset({"POST", "DELETE", "PATCH", "PUT"})
# Model calls and reads that are POSTs: their own records (usage, the stored response) say it.
_NOT_CHANGES: Final = frozenset(
    {
        "/v1/responses",
        "/v1/agents/responses",
        "/v1/responses/compact",
        "/v1/responses/input_tokens",
        "/v1/chat/completions",
        "/v1/completions",
        "/v1/messages",
        "/v1/messages/count_tokens",
        "/v1/embeddings",
        "/v1/moderations",
        "/v1/safety/run-shield",
        "/v1/traces/ingest",  # the SDK's telemetry, kept as such
    }
)
_NOT_DATA: Final = ("/v1/organization/", "/v1/projects/")  # logged by their services


def changed_resource(scope: Scope) -> str | None:
    """The resource (``files`` ...) an HTTP request changes; ``None`` when it changes none."""
    path: str = scope.get("path", "")
    if scope["type"] != "http" or scope.get("method") not in _CHANGING:
        return None
    if path in _NOT_CHANGES or path.startswith(_NOT_DATA) or path.endswith("/search"):
        return None
    parts = path.split("/")
    return parts[2] if len(parts) > 2 and parts[1] == "v1" and parts[2] else None


async def run_logged(
    app: ASGIApp, resource: str, audit: AuditLog, scope: Scope, receive: Receive, send: Send
) -> None:
    """Run the request; log its change if it succeeded (in the request's project and actor)."""
    answer = _Answer()

    async def sending(message: Message) -> None:
        answer.saw(message)
        await send(message)

    await app(scope, receive, sending)
    if not 200 <= answer.status < 300:
        return
    try:
        await _log(audit, resource, scope, answer.created_id())
    except DatabaseUnavailableError as exc:  # the change is made and answered: say what is lost
        logger.warning(
            "the audit entry of %s %s was lost: %s", scope["method"], scope["path"], exc.message
        )


async def _log(audit: AuditLog, resource: str, scope: Scope, created: str | None) -> None:
    method, path = scope["method"], scope["path"]
    parts = path.split("/")
    if method == "DELETE":
        kind = "resource.deleted"
    elif method == "POST" and len(parts) == 3:
        kind = "resource.created"
    else:
        kind = "resource.updated"
    subject = created if kind == "resource.created" and created else _named(parts)
    details = {"resource": resource, "method": method, "path": path}
    await audit.record(kind, subject=subject, project=(current_project(), None), details=details)


def _named(parts: list[str]) -> str:
    """The object a path names: its first id (``/v1/files/file-1/...``: ``file-1``)."""
    return parts[3] if len(parts) > 3 else parts[2]


class _Answer:
    def __init__(self) -> None:
        self.status = 0
        self._json = False
        self._body = bytearray()

    def saw(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            headers = dict(message.get("headers", []))
            self._json = headers.get(b"content-type", b"").startswith(b"application/json")
        elif message["type"] == "http.response.body" and self._json and self._short:
            self._body += message.get("body", b"")

    @property
    def _short(self) -> bool:
        return len(self._body) <= MAX_BODY

    def created_id(self) -> str | None:
        if not self._json or len(self._body) > MAX_BODY:
            return None
        try:
            answer = json.loads(self._body)
        except ValueError:
            return None
        found = answer.get("id") if isinstance(answer, dict) else None
        return found if isinstance(found, str) else None
