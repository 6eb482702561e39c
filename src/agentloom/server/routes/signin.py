"""Signing in to the console with the OIDC issuer of ``[auth.jwt]`` (``[auth.oidc]``):

- ``GET /auth/login`` sends the browser to the issuer (state, nonce, PKCE S256 challenge), the
  login kept in a sealed, HttpOnly cookie for ``login_seconds``;
- ``GET /auth/callback`` checks the state, exchanges the code with the PKCE verifier, checks the
  ID token (:mod:`agentloom.auth.oidc`), then sets the session cookie (sealed, HttpOnly,
  SameSite=Lax, Secure over https) and the CSRF cookie the console reads, and goes back to the
  console;
- ``POST /auth/logout`` (with the CSRF header) forgets them;
- ``GET /auth/session``: whether sign-in is offered, and who is signed in, for the console.

A failed sign-in is a short page saying why, with the status of the error table
(:mod:`agentloom.server.errors`): a bad state is a 400, a refused ID token a 401, an issuer
that is down or slow a 503 or 504.
"""

from __future__ import annotations

import hmac
import html
import logging
from typing import Final

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from agentloom.auth.oidc import OidcSignIn
from agentloom.auth.sessions import (
    CSRF_COOKIE,
    CSRF_HEADER,
    LOGIN_COOKIE,
    SESSION_COOKIE,
    LoginStart,
    Session,
    check_csrf,
)
from agentloom.errors import (
    AgentloomError,
    AuthenticationError,
    InvalidRequestError,
    NotFoundError,
)
from agentloom.server.errors import status_and_type
from agentloom.server.routes.console import HEADERS
from agentloom.server.runtime import runtime_of
from agentloom.server.spec import PageRoute

log = logging.getLogger(__name__)

CONSOLE: Final = "/console/"
LOGIN_PATH: Final = "/auth/"  # the login cookie goes to these routes only


def _sign_in(request: Request) -> OidcSignIn:
    found = runtime_of(request).oidc
    if found is None:
        raise NotFoundError("Signing in with an OIDC issuer is not configured ([auth.oidc]).")
    return found


async def login(request: Request) -> Response:
    sign_in = _sign_in(request)
    start = LoginStart.new(_next(request), sign_in.settings.login_seconds)
    try:
        target = await sign_in.client.authorization_url(start)
    except AgentloomError as exc:
        return _failed(exc)
    reply = RedirectResponse(target, status_code=302)
    sealed = sign_in.sessions.seal_login(start)
    _cookie(reply, sign_in, LOGIN_COOKIE, sealed, sign_in.settings.login_seconds, path=LOGIN_PATH)
    return reply


async def callback(request: Request) -> Response:
    sign_in = _sign_in(request)
    try:
        start, session = await _signed_in(sign_in, request)
    except AgentloomError as exc:
        reply = _failed(exc)
    else:
        reply = RedirectResponse(start.next, status_code=303)
        seconds = sign_in.settings.session_seconds
        _cookie(reply, sign_in, SESSION_COOKIE, sign_in.sessions.seal_session(session), seconds)
        _cookie(reply, sign_in, CSRF_COOKIE, session.csrf, seconds, http_only=False)
    reply.delete_cookie(LOGIN_COOKIE, path=LOGIN_PATH)
    return reply


async def _signed_in(sign_in: OidcSignIn, request: Request) -> tuple[LoginStart, Session]:
    start = sign_in.sessions.open_login(request.cookies.get(LOGIN_COOKIE))
    query = request.query_params
    if "error" in query:
        said = query.get("error_description")
        detail = f" ({said[:200]})" if said else ""
        refused = query["error"][:100]
        raise AuthenticationError(f"The issuer did not sign you in: {refused}{detail}.")
    if not _same(query.get("state"), start.state):
        raise _bad_state()
    code = query.get("code")
    if not code:
        raise InvalidRequestError("The issuer sent no authorization code back.")
    claims = await sign_in.client.redeem(code, start)
    return start, await sign_in.session(claims)


async def logout(request: Request) -> Response:
    sign_in = _sign_in(request)
    sealed = request.cookies.get(SESSION_COOKIE)
    if sealed:
        try:
            session = sign_in.sessions.open_session(sealed)
        except AuthenticationError:
            session = None  # an expired or changed cookie: forgotten all the same
        if session is not None:
            check_csrf(session, request.headers.get(CSRF_HEADER))
    reply = Response(status_code=204)
    for name in (SESSION_COOKIE, CSRF_COOKIE):
        reply.delete_cookie(name, path="/")
    return reply


async def session_info(request: Request) -> Response:
    """What the console shows on its sign-in page and beside its navigation."""
    sign_in = runtime_of(request).oidc
    if sign_in is None:
        return JSONResponse({"oidc": None, "session": None})
    offered = {"issuer": sign_in.client.issuer, "name": sign_in.client.display_name}
    return JSONResponse({"oidc": offered, "session": _current(sign_in, request)})


def _current(sign_in: OidcSignIn, request: Request) -> dict[str, object] | None:
    sealed = request.cookies.get(SESSION_COOKIE)
    if not sealed:
        return None
    try:
        session = sign_in.sessions.open_session(sealed)
    except AuthenticationError:
        return None
    expires = session.expires_at
    return {"name": session.name, "project_id": session.project_id, "expires_at": expires}


def _next(request: Request) -> str:
    """Where the browser goes once signed in: a page of the console, else the console."""
    wanted = request.query_params.get("next", "")
    return wanted if wanted.startswith(CONSOLE) else CONSOLE


def _same(sent: str | None, expected: str) -> bool:
    return sent is not None and hmac.compare_digest(sent.encode(), expected.encode())


def _bad_state() -> InvalidRequestError:
    return InvalidRequestError(
        "The issuer's answer does not belong to this sign-in (its state does not match): "
        "start again from the console.",
        code="invalid_login_state",
    )


def _cookie(
    reply: Response,
    sign_in: OidcSignIn,
    name: str,
    value: str,
    seconds: int,
    *,
    path: str = "/",
    http_only: bool = True,
) -> None:
    reply.set_cookie(
        name,
        value,
        max_age=seconds,
        path=path,
        secure=sign_in.settings.secure,
        httponly=http_only,
        samesite="lax",
    )


def _failed(exc: AgentloomError) -> Response:
    status, _ = status_and_type(exc)
    log.warning("a console sign-in failed (%d): %s", status, exc.message)
    page = (
        "<!doctype html><meta charset=utf-8><title>Sign-in failed · agentloom</title>"
        f"<h1>Sign-in failed</h1><p id=reason>{html.escape(exc.message, quote=False)}</p>"
        f'<p><a href="{CONSOLE}">Back to the console</a></p>'
    )
    return HTMLResponse(page, status_code=status, headers=HEADERS)


routes = [
    PageRoute("/auth/login", login),
    PageRoute("/auth/callback", callback),
    PageRoute("/auth/logout", logout, method="POST"),
    PageRoute("/auth/session", session_info),
]
