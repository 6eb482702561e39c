"""The console's sign-in sessions: what the browser keeps between the steps of an OIDC sign-in
(a short-lived login cookie) and after it (the session cookie), both sealed
(:mod:`agentloom.sealing`), so the browser holds them but can neither read nor change them.

A session names its principal (the project its ID token's claim named, and ``jwt:<sub>``, as a
bearer JWT of the same person would), an expiry and a CSRF token. The token is also handed to the
console in a cookie it can read (double submit): a request admitted by the session cookie that
changes anything must carry it in ``X-CSRF-Token``, which a page of another site cannot do.
"""

from __future__ import annotations

import hmac
import json
import secrets
import time
from dataclasses import asdict
from typing import Final, Protocol

from agentloom.auth.verifier import Principal
from agentloom.errors import AuthenticationError, InvalidRequestError, PermissionDeniedError
from agentloom.frozen import frozen
from agentloom.sealing import Sealer, SealError

__all__ = ["LoginStart", "Session", "Sessions"]

SESSION_PURPOSE: Final = "console-session"
LOGIN_PURPOSE: Final = "oidc-login"
CSRF_HEADER: Final = "X-CSRF-Token"
SESSION_COOKIE: Final = "agentloom_session"  # the sealed session, HttpOnly
CSRF_COOKIE: Final = "agentloom_csrf"  # its CSRF token, for the console to read and send back
LOGIN_COOKIE: Final = "agentloom_login"  # between /auth/login and /auth/callback, HttpOnly
SAFE_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})  # they change nothing


class ProjectCheck(Protocol):
    async def project_active(self, project_id: str) -> bool: ...


@frozen
class LoginStart:
    """What ``/auth/login`` keeps for ``/auth/callback``: the checks of the issuer's answer and
    where the browser goes afterwards."""

    state: str
    nonce: str
    verifier: str  # the PKCE code verifier
    next: str
    until: float

    @classmethod
    def new(cls, next_path: str, seconds: float) -> LoginStart:
        return cls(
            state=secrets.token_urlsafe(24),
            nonce=secrets.token_urlsafe(24),
            verifier=secrets.token_urlsafe(48),  # 64 characters (PKCE asks for 43 to 128)
            next=next_path,
            until=time.time() + seconds,
        )


@frozen
class Session:
    """A signed-in person: the principal they work as, the name the console shows, until when."""

    project_id: str
    key_id: str | None
    name: str
    csrf: str
    expires_at: float

    @property
    def principal(self) -> Principal:
        return Principal(self.project_id, self.key_id, self.expires_at)


class Sessions:
    def __init__(self, sealer: Sealer, projects: ProjectCheck) -> None:
        self._sealer = sealer
        self._projects = projects

    def seal_login(self, login: LoginStart) -> str:
        return self._sealer.seal(LOGIN_PURPOSE, json.dumps(asdict(login)).encode())

    def open_login(self, sealed: str | None) -> LoginStart:
        """The login this browser started; :class:`InvalidRequestError` when there is none, it
        was changed, or it is too old."""
        try:
            login = LoginStart(**json.loads(self._sealer.open(LOGIN_PURPOSE, sealed or "")))
        except (SealError, ValueError, TypeError):
            raise InvalidRequestError(
                "This sign-in was not started by this browser (its login cookie is missing or "
                "not valid): start again from the console.",
                code="invalid_login_state",
            ) from None
        if login.until <= time.time():
            raise InvalidRequestError(
                "This sign-in took too long: start again from the console.",
                code="invalid_login_state",
            )
        return login

    def seal_session(self, session: Session) -> str:
        return self._sealer.seal(SESSION_PURPOSE, json.dumps(asdict(session)).encode())

    def open_session(self, sealed: str) -> Session:
        """The session of a cookie; :class:`AuthenticationError` when it is not one of ours, was
        changed, or has expired."""
        try:
            session = Session(**json.loads(self._sealer.open(SESSION_PURPOSE, sealed)))
        except (SealError, ValueError, TypeError):
            raise _refused("the session cookie is not valid") from None
        if session.expires_at <= time.time():
            raise _refused("the session has expired")
        return session

    async def principal(self, sealed: str, csrf: str | None, *, changes: bool) -> Principal:
        """Who a request carrying the session cookie ``sealed`` is. ``changes``: the request
        may change something, so it must carry the session's CSRF token (``csrf``)."""
        session = self.open_session(sealed)
        if changes:
            check_csrf(session, csrf)
        if not await self._projects.project_active(session.project_id):
            raise _refused(f"its project '{session.project_id}' does not exist or is archived")
        return session.principal


def check_csrf(session: Session, sent: str | None) -> None:
    if sent is None:
        raise PermissionDeniedError(
            f"A request signed in with the console's session cookie that changes anything "
            f"must carry the {CSRF_HEADER} header.",
            code="csrf_token_missing",
        )
    if not hmac.compare_digest(sent.encode(), session.csrf.encode()):
        raise PermissionDeniedError(
            f"The {CSRF_HEADER} header does not match this session's token.",
            code="csrf_token_mismatch",
        )


def _refused(reason: str) -> AuthenticationError:
    return AuthenticationError(f"Not signed in: {reason}; sign in again.")
