"""Who the running work acts as, and how the audit log names them (OpenAI's ``actor``).

The edge (:mod:`agentloom.server.auth`) runs each request as its principal; what the request
changes is logged with :func:`actor_of` the principal: a user's key names the key and its user
(id and email), a service account's key the key and the account, a bearer JWT its subject as
a session's user, the admin key itself.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from contextvars import ContextVar, Token
from typing import Final

from agentloom.auth.verifier import Principal
from agentloom.frozen import frozen

__all__ = ["Actor", "acting_as", "actor_of", "current_principal"]

JWT_PREFIX: Final = "jwt:"  # a JWT's principal: key_id "jwt:<sub>"
_PRINCIPAL: ContextVar[Principal | None] = ContextVar("agentloom_principal", default=None)


@frozen
class Actor:
    """An audit entry's ``actor`` object, and the ids it can be found by (``actor_ids``)."""

    body: dict[str, object]
    id: str  # the key (or the JWT's subject, the admin key's name)
    user_id: str | None = None


def current_principal() -> Principal | None:
    return _PRINCIPAL.get()


def acting_as(principal: Principal) -> AbstractContextManager[None]:
    """Run the block (and the tasks it starts) as ``principal``."""
    return _ActingAs(principal)


class _ActingAs(AbstractContextManager[None]):
    """:func:`acting_as`'s block: an object, not a generator (every request enters one)."""

    __slots__ = ("_principal", "_token")

    def __init__(self, principal: Principal) -> None:
        self._principal = principal
        self._token: Token[Principal | None] | None = None

    def __enter__(self) -> None:
        self._token = _PRINCIPAL.set(self._principal)

    def __exit__(self, *_: object) -> None:
        assert self._token is not None, "entered first"
        _PRINCIPAL.reset(self._token)


def actor_of(principal: Principal | None, fallback: str) -> Actor:
    """How the audit log names ``principal`` (``fallback``: the name of an actor without one,
    the CLI's or a server's without keys)."""
    key_id = None if principal is None else principal.key_id
    if principal is None or key_id is None:
        name = "admin" if principal is not None and principal.is_admin else fallback
        return Actor({"type": "api_key", "api_key": {"id": name}}, name)
    if key_id.startswith(JWT_PREFIX):
        subject = key_id.removeprefix(JWT_PREFIX)
        return Actor({"type": "session", "session": {"user": {"id": subject}}}, key_id, subject)
    if principal.user_id is not None:
        user = {"id": principal.user_id, "email": principal.email}
        key = {"id": key_id, "type": "user", "user": user}
        return Actor({"type": "api_key", "api_key": key}, key_id, principal.user_id)
    if principal.service_account_id is not None:
        account = {"id": principal.service_account_id}
        key = {"id": key_id, "type": "service_account", "service_account": account}
        return Actor({"type": "api_key", "api_key": key}, key_id)
    return Actor({"type": "api_key", "api_key": {"id": key_id}}, key_id)
