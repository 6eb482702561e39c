"""Restricted keys: what a key may do, by endpoint group and read or write (OpenAI's scopes).

A key without scopes has every permission of its owner (OpenAI's "All"). A restricted key holds
scopes such as ``api.files.read`` or ``api.model.request``; ``api.all.read`` is OpenAI's
"Read only". :data:`ENDPOINT_GROUPS` is the one table from our routes to scopes: a request to a
group's path needs its ``read`` scope for ``GET`` / ``HEAD`` (and a search), its ``write``
scope for the rest. A group's write scope grants its read scope too, ``api.all.write`` grants
everything and ``api.all.read`` every read. A ``/v1`` path no group names needs
``api.all.read`` or ``api.all.write``: a new route is closed to restricted keys until it is
listed here.

A user's roles grant permissions in the same words (:mod:`agentloom.auth.verifier` holds both on
the principal); a request passes when the key's scopes and its owner's permissions both grant
what it needs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen

__all__ = [
    "ALL_READ",
    "ALL_WRITE",
    "ENDPOINT_GROUPS",
    "SCOPES",
    "EndpointGroup",
    "grants",
    "needed_scope",
    "scopes_of",
]

ALL_READ: Final = "api.all.read"
ALL_WRITE: Final = "api.all.write"


@frozen
class EndpointGroup:
    """Routes under ``prefixes``, read with ``read`` and changed with ``write`` (``None``: a
    group only read, changed by nothing but ``api.all.write``)."""

    read: str
    write: str | None
    prefixes: tuple[str, ...]


_MODEL_PATHS: Final = (
    "/v1/models",
    "/v1/completions",
    "/v1/embeddings",
    "/v1/moderations",
    "/v1/shields",
    "/v1/safety",
)
ENDPOINT_GROUPS: Final = (
    EndpointGroup(
        "api.model.read",
        "api.model.request",  # the model capabilities: a call to a model, nothing stored
        _MODEL_PATHS,
    ),
    EndpointGroup(
        "api.responses.read", "api.responses.write", ("/v1/responses", "/v1/agents/responses")
    ),
    EndpointGroup("api.chat.completions.read", "api.chat.completions.write", ("/v1/chat",)),
    EndpointGroup("api.conversations.read", "api.conversations.write", ("/v1/conversations",)),
    EndpointGroup("api.prompts.read", "api.prompts.write", ("/v1/prompts",)),
    EndpointGroup("api.files.read", "api.files.write", ("/v1/files",)),
    EndpointGroup("api.vector_stores.read", "api.vector_stores.write", ("/v1/vector_stores",)),
    EndpointGroup("api.containers.read", "api.containers.write", ("/v1/containers",)),
    EndpointGroup(
        "api.webhooks.read",
        "api.webhooks.write",
        ("/v1/webhook_endpoints", "/v1/webhook_event_types"),
    ),
    EndpointGroup("api.managed_agents.read", "api.managed_agents.write", ("/v1/managed-agents",)),
    EndpointGroup("api.requests.read", None, ("/v1/requests",)),  # the project's request log
)
# A chat completion made is a model call (OpenAI's "model capabilities"); stored ones are read,
# updated and deleted under api.chat.completions.*.
_MODEL_REQUESTS: Final = frozenset({"/v1/chat/completions"})
_READ_METHODS: Final = frozenset({"GET", "HEAD"})
_SEARCH: Final = "/search"  # a POST that reads (vector store search)

SCOPES: Final = frozenset(
    {ALL_READ, ALL_WRITE} | {s for g in ENDPOINT_GROUPS for s in (g.read, g.write) if s}
)
_GRANTED_BY: Final[dict[str, frozenset[str]]] = {
    **{g.write: frozenset({g.write, ALL_WRITE}) for g in ENDPOINT_GROUPS if g.write},
    **{
        g.read: frozenset({g.read, ALL_READ, ALL_WRITE} | ({g.write} if g.write else set()))
        for g in ENDPOINT_GROUPS
    },
    ALL_READ: frozenset({ALL_READ, ALL_WRITE}),
    ALL_WRITE: frozenset({ALL_WRITE}),
}


def needed_scope(method: str, path: str) -> str:
    """The scope a request for ``path`` with ``method`` needs (a WebSocket's method: ``POST``)."""
    reading = method in _READ_METHODS or (method == "POST" and path.endswith(_SEARCH))
    if not reading and path in _MODEL_REQUESTS:
        return "api.model.request"
    group = _group(path)
    if group is None:
        return ALL_READ if reading else ALL_WRITE
    if reading:
        return group.read
    return group.write or ALL_WRITE


_BY_PREFIX: Final = {prefix: group for group in ENDPOINT_GROUPS for prefix in group.prefixes}


def _group(path: str) -> EndpointGroup | None:
    """The group of a path's first two segments after ``/v1`` (or its first: every prefix has
    one or two)."""
    parts = path.split("/", 5)
    return _BY_PREFIX.get("/".join(parts[:4])) or _BY_PREFIX.get("/".join(parts[:3]))


def grants(held: frozenset[str] | None, needed: str) -> bool:
    """Whether scopes ``held`` (``None``: every one) grant ``needed``."""
    return held is None or not held.isdisjoint(_GRANTED_BY[needed])


def scopes_of(given: Iterable[str] | None, *, param: str = "scopes") -> frozenset[str] | None:
    """The scopes asked for, checked; ``None`` (every permission) for none or an empty list."""
    if given is None:
        return None
    asked = frozenset(given)
    unknown = sorted(asked - SCOPES)
    if unknown:
        raise InvalidRequestError(
            f"Unknown scope '{unknown[0]}'. The scopes are {', '.join(sorted(SCOPES))}.",
            param=param,
            code="invalid_value",
        )
    return asked or None
