"""Authentication at the edge: every ``/v1`` request (HTTP, SSE, WebSocket) gets a principal
and runs as its project.

With ``[auth] mode = "keys"`` a request needs ``Authorization: Bearer <key>``: a project key
works in its project, and so does a JWT from the OIDC provider of ``[auth.jwt]`` (in the project
its claim names); the admin key manages the organization (``/v1/organization/...``) and
works in a project only when it names one with the ``OpenAI-Project`` header. With
``[auth.oidc]``, a request without a key may carry the console's session cookie instead (the
person signed in with the issuer; a request that changes anything needs its CSRF header too).
Without keys every request is the default project's and the organization routes are open (a
server on loopback, run by one trusted person). ``/v1/health`` is always open. A restricted key
(or a user's key whose roles grant less) is refused what its scopes do not grant, with a 403
naming the scope (:mod:`agentloom.auth.scopes`).

The edge (:mod:`agentloom.server.edge`) admits each request here and runs it in the context
of its project (:func:`agentloom.tenancy.acting_for`): everything the request runs, including
the tasks it starts, works as that project.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Final

from starlette.requests import cookie_parser
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from agentloom.auth.actor import acting_as
from agentloom.auth.jwt import looks_like_jwt
from agentloom.auth.scopes import needed_scope
from agentloom.auth.sessions import SAFE_METHODS, SESSION_COOKIE
from agentloom.auth.verifier import Principal
from agentloom.errors import AgentloomError, AuthenticationError, PermissionDeniedError
from agentloom.frozen import frozen
from agentloom.server.errors import error_response_for
from agentloom.server.runtime import Runtime
from agentloom.tenancy import DEFAULT_PROJECT, Policy, acting_for

__all__ = ["Admission", "admit", "principal_of", "refuse"]

OPEN_PATHS: Final = frozenset({"/v1/health", "/v1/health/ready"})
ADMIN_PREFIXES: Final = ("/v1/organization/", "/v1/projects/")  # a project's roles: OpenAI's path
ADMIN_ACTOR: Final = "admin"  # the admin key, as usage and the audit log name it
_STATE_KEY: Final = "principal"
_NO_KEY: Final = (
    "You didn't provide an API key. You need to provide your API key in an Authorization "
    "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
)


def principal_of(scope: Scope) -> Principal:
    """The principal the middleware found for this request (the default project's without
    keys)."""
    found = scope.get("state", {}).get(_STATE_KEY)
    return found if isinstance(found, Principal) else Principal(DEFAULT_PROJECT)


@frozen
class Admission:
    """Who a request is (its principal) and the project it works in, under that project's
    policy."""

    principal: Principal
    project: str
    policy: Policy

    def acting(self) -> AbstractContextManager[None]:
        """Run the block as work of the request's project, asked for with its key."""
        return _Admitted(self)


class _Admitted(AbstractContextManager[None]):
    """:meth:`Admission.acting`'s block: an object, not generators (every request enters
    one)."""

    __slots__ = ("_as", "_for")

    def __init__(self, admission: Admission) -> None:
        principal = admission.principal
        key_id = principal.key_id or (ADMIN_ACTOR if principal.is_admin else None)
        viewer = principal.viewer()
        self._for = acting_for(admission.project, admission.policy, key_id=key_id, viewer=viewer)
        self._as = acting_as(principal)

    def __enter__(self) -> None:
        self._for.__enter__()
        self._as.__enter__()

    def __exit__(self, *_: object) -> None:
        self._as.__exit__(None, None, None)  # neither suppresses an error
        self._for.__exit__(None, None, None)


async def admit(scope: Scope) -> Admission | None:
    """The admission of an HTTP or WebSocket request to ``/v1`` (``None``: an open path, or
    an app whose lifespan did not run, which then says so itself); an
    :class:`AgentloomError` when it is refused (:func:`refuse` answers it)."""
    path: str = scope.get("path", "")
    if not _guarded(path):
        return None
    runtime = getattr(scope["app"].state, "runtime", None)
    if not isinstance(runtime, Runtime):
        return None
    principal = await _authenticate(runtime, scope)
    project = await _project(runtime, principal, scope, path)
    _permitted(principal, scope, path)
    scope.setdefault("state", {})[_STATE_KEY] = principal
    return Admission(principal, project, await runtime.keys.policy(project))


def _guarded(path: str) -> bool:
    return path.startswith("/v1/") and path not in OPEN_PATHS


async def _authenticate(runtime: Runtime, scope: Scope) -> Principal:
    if not runtime.settings.auth.keys:
        return Principal(DEFAULT_PROJECT)
    token = _bearer(scope)
    if token is None:
        signed_in = await _signed_in(runtime, scope)
        if signed_in is None:
            raise AuthenticationError(_NO_KEY)
        return signed_in
    if runtime.jwt is not None and looks_like_jwt(token):
        return await runtime.jwt.verify(token)
    principal = await runtime.keys.verify(token)
    if principal is None:
        raise AuthenticationError(
            f"Incorrect API key provided: {_shown(token)}. You can find your API keys with "
            "your agentloom administrator (agentloom keys list)."
        )
    return principal


async def _signed_in(runtime: Runtime, scope: Scope) -> Principal | None:
    """The principal of the console's session cookie (:mod:`agentloom.auth.sessions`), for an
    HTTP request that has one; a WebSocket is never admitted by a cookie."""
    if runtime.oidc is None or scope["type"] != "http":
        return None
    sealed = cookie_parser(_header(scope, b"cookie") or "").get(SESSION_COOKIE)
    if not sealed:
        return None
    changes = scope["method"] not in SAFE_METHODS
    csrf = _header(scope, b"x-csrf-token")
    return await runtime.oidc.sessions.principal(sealed, csrf, changes=changes)


async def _project(runtime: Runtime, principal: Principal, scope: Scope, path: str) -> str:
    """The project the request works in."""
    named = _header(scope, b"openai-project")
    if path.startswith(ADMIN_PREFIXES):
        if not principal.is_admin and runtime.settings.auth.keys:
            raise PermissionDeniedError(
                "The organization's routes need the admin key; this is a project key."
            )
        return DEFAULT_PROJECT
    if principal.project_id is not None:
        if named is not None and named != principal.project_id:
            raise AuthenticationError(
                f"OpenAI-Project header '{named}' does not match the project of this API key.",
                code="mismatched_project",
            )
        return principal.project_id
    if named is None:
        raise PermissionDeniedError(
            "The admin key manages the organization; to work in a project, name it in the "
            "OpenAI-Project header, or use one of its keys."
        )
    if not await runtime.keys.project_active(named):
        raise AuthenticationError(f"No active project '{named}'.", code="invalid_project")
    return named


def _permitted(principal: Principal, scope: Scope, path: str) -> None:
    """Refuse what a restricted key, or its user's roles, do not grant (OpenAI's message)."""
    if principal.scopes is None and principal.permissions is None:
        return
    needed = needed_scope(scope.get("method", "POST"), path)  # a WebSocket makes responses
    lacking = principal.missing(needed)
    if lacking is None:
        return
    why = (
        "this API key is restricted to other scopes"
        if lacking == "key"
        else "the roles of this key's user in the project do not grant it"
    )
    raise PermissionDeniedError(
        f"You have insufficient permissions for this operation. Missing scopes: {needed}. ({why}.)",
        code="missing_scope",
    )


def _bearer(scope: Scope) -> str | None:
    """The key: ``Authorization: Bearer <key>``, or Anthropic's clients' ``x-api-key``."""
    value = _header(scope, b"authorization")
    if value is None:
        return (_header(scope, b"x-api-key") or "").strip() or None
    scheme, _, token = value.partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _shown(token: str) -> str:
    return "*" * 4 if len(token) < 8 else f"{token[:3]}{'*' * 8}{token[-4:]}"


async def refuse(exc: AgentloomError, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer a refused request: its error, or a WebSocket closed before it is accepted."""
    response: JSONResponse = error_response_for(exc, scope.get("path", ""))
    if scope["type"] == "http":
        await response(scope, receive, send)
        return
    # A WebSocket handshake: answered with the HTTP error where the server can send one,
    # else closed before it is accepted (a 403 to the client).
    if "websocket.http.response" in scope.get("extensions", {}):
        await send(
            {
                "type": "websocket.http.response.start",
                "status": response.status_code,
                "headers": response.raw_headers,
            }
        )
        await send({"type": "websocket.http.response.body", "body": response.body})
    else:
        await send({"type": "websocket.close", "code": 1008})
