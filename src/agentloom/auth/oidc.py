"""Signing in to the console with OIDC: the authorization code flow with PKCE (S256), against
the issuer of ``[auth.jwt]``, as the relying party ``[auth.oidc]`` describes.

The issuer's endpoints come from its discovery document (``/.well-known/openid-configuration``,
its ``issuer`` checked, kept an hour). Every call to the issuer has a deadline (``timeout``, for
the whole call): an issuer that is down or hangs is an error naming it, never a wait. The ID
token is checked with the issuer's keys as ``[auth.jwt]`` holds them: its signature, ``iss``,
``aud`` (the client id), ``exp``, ``iat`` and the ``nonce`` of this sign-in; the claim of
``[auth.jwt] project_claim`` names the project the person works in.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Awaitable, Sequence
from typing import Any, Final
from urllib.parse import quote, urlencode, urlsplit

import anyio
import httpx2
import jwt

from agentloom.auth.jwks import SigningKeys, UnusableKey
from agentloom.auth.jwt import key_id_of, refusal_reason
from agentloom.auth.sessions import LoginStart, ProjectCheck, Session, Sessions
from agentloom.config import JwtSettings, OidcSettings
from agentloom.errors import (
    AuthenticationError,
    UpstreamError,
    UpstreamTimeoutError,
    UpstreamUnavailableError,
)
from agentloom.frozen import frozen
from agentloom.sealing import Sealer
from agentloom.tls import client_context

__all__ = ["OidcClient", "OidcSignIn", "build_sign_in"]

DISCOVERY_PATH: Final = "/.well-known/openid-configuration"
DISCOVERY_SECONDS: Final = 3600.0  # the discovery document is read again after this
MAX_REPLY_BYTES: Final = 256 * 1024
_REQUIRED: Final = ["exp", "iat", "iss", "aud", "sub", "nonce"]
_NAME_CLAIMS: Final = ("email", "preferred_username", "name", "sub")


@frozen
class Endpoints:
    authorization: str
    token: str


class OidcClient:
    """The relying party: where to send the browser, and what the code it brings back is."""

    def __init__(
        self, settings: OidcSettings, jwt_settings: JwtSettings, keys: SigningKeys
    ) -> None:
        self._settings = settings
        self._jwt = jwt_settings
        self._keys = keys
        self._http = httpx2.AsyncClient(
            verify=client_context(), timeout=settings.timeout, follow_redirects=False
        )
        self._endpoints: tuple[Endpoints, float] | None = None  # and until when it is kept

    @property
    def issuer(self) -> str:
        return self._jwt.issuer

    @property
    def display_name(self) -> str:
        return self._settings.display_name or urlsplit(self.issuer).netloc or self.issuer

    async def authorization_url(self, login: LoginStart) -> str:
        """The issuer's page that signs the person in and sends them back with a code."""
        query = {
            "response_type": "code",
            "client_id": self._settings.client_id,
            "redirect_uri": self._settings.redirect_url,
            "scope": " ".join(self._settings.scopes),
            "state": login.state,
            "nonce": login.nonce,
            "code_challenge": challenge(login.verifier),
            "code_challenge_method": "S256",
        }
        endpoint = (await self.endpoints()).authorization
        return f"{endpoint}{'&' if '?' in endpoint else '?'}{urlencode(query)}"

    async def redeem(self, code: str, login: LoginStart) -> dict[str, Any]:
        """The claims of the ID token the issuer gives for ``code`` (checked)."""
        reply = await self._call("token endpoint", self._exchange(code, login))
        id_token = reply.get("id_token")
        if not isinstance(id_token, str):
            raise UpstreamError("The issuer's token endpoint answered without an id_token.")
        return await self._claims(id_token, login.nonce)

    async def endpoints(self) -> Endpoints:
        kept = self._endpoints
        if kept is not None and kept[1] > time.monotonic():
            return kept[0]
        url = self.issuer.rstrip("/") + DISCOVERY_PATH
        document = await self._call("discovery document", self._http.get(url))
        found = _endpoints(document, self.issuer)
        self._endpoints = (found, time.monotonic() + DISCOVERY_SECONDS)
        return found

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _exchange(self, code: str, login: LoginStart) -> httpx2.Response:
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self._settings.redirect_url,
            "code_verifier": login.verifier,
        }
        headers = {"accept": "application/json"}
        secret = self._settings.client_secret
        if secret is None:
            form["client_id"] = self._settings.client_id  # a public client
        else:
            headers["authorization"] = basic(self._settings.client_id, secret.get_secret_value())
        token_url = (await self.endpoints()).token
        return await self._http.post(token_url, data=form, headers=headers)

    async def _call(self, what: str, sent: Awaitable[httpx2.Response]) -> dict[str, Any]:
        """The JSON object the issuer answers ``sent`` (an awaitable reply) with, within the
        deadline; an upstream error naming ``what`` otherwise."""
        seconds = self._settings.timeout
        try:
            with anyio.fail_after(seconds):
                reply = await sent
        except (TimeoutError, httpx2.TimeoutException):
            raise UpstreamTimeoutError(
                f"The issuer's {what} did not answer within {seconds:g} s."
            ) from None
        except httpx2.HTTPError as exc:
            raise UpstreamUnavailableError(
                f"The issuer's {what} cannot be reached: {exc or type(exc).__name__}."
            ) from None
        return _json_object(what, reply)

    async def _claims(self, id_token: str, nonce: str) -> dict[str, Any]:
        algorithm, kid = _header(id_token, self._jwt.algorithms)
        try:
            key = await self._keys.find(kid, algorithm)
        except UnusableKey as exc:
            raise _refused(str(exc)) from None
        if key is None:
            raise _refused("its signing key is not one of the issuer's keys")
        try:
            claims: dict[str, Any] = jwt.decode(
                id_token,
                key,
                algorithms=[algorithm],
                audience=self._settings.client_id,
                issuer=self.issuer,
                leeway=self._jwt.leeway_seconds,
                options={"require": _REQUIRED},
            )
        except jwt.MissingRequiredClaimError as exc:
            raise _refused(f"it has no {exc.claim!r} claim") from None
        except jwt.InvalidTokenError as exc:
            raise _refused(refusal_reason(exc)) from None
        if not hmac.compare_digest(str(claims["nonce"]).encode(), nonce.encode()):
            raise _refused("its nonce is not this sign-in's")
        return claims


@frozen
class OidcSignIn:
    """Signing in to the console: the relying party, the sessions it makes, and their settings."""

    settings: OidcSettings
    client: OidcClient
    sessions: Sessions
    projects: ProjectCheck
    project_claim: str

    async def session(self, claims: dict[str, Any]) -> Session:
        """The session of a person whose ID token carried ``claims``."""
        project = claims.get(self.project_claim)
        if not isinstance(project, str) or not project:
            raise _refused(f"it has no {self.project_claim!r} claim naming a project")
        if not await self.projects.project_active(project):
            raise _refused(f"its project '{project}' does not exist or is archived")
        return Session(
            project_id=project,
            key_id=key_id_of(claims.get("sub")),
            name=_name(claims),
            csrf=secrets.token_urlsafe(32),
            expires_at=time.time() + self.settings.session_seconds,
        )


def build_sign_in(
    settings: OidcSettings,
    jwt_settings: JwtSettings,
    keys: SigningKeys,
    sealer: Sealer,
    projects: ProjectCheck,
) -> OidcSignIn:
    """The console's sign-in; its caller closes the client (:meth:`OidcClient.aclose`)."""
    client = OidcClient(settings, jwt_settings, keys)
    sessions = Sessions(sealer, projects)
    return OidcSignIn(settings, client, sessions, projects, jwt_settings.project_claim)


def challenge(verifier: str) -> str:
    """PKCE's S256 code challenge of ``verifier``."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def basic(client_id: str, secret: str) -> str:
    """client_secret_basic: the id and secret form-encoded, then Basic (RFC 6749, 2.3.1)."""
    pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
    return "Basic " + base64.b64encode(pair.encode()).decode()


def _endpoints(document: dict[str, Any], issuer: str) -> Endpoints:
    if document.get("issuer") != issuer:
        raise UpstreamError(
            f"The issuer's discovery document names another issuer ({document.get('issuer')!r}, "
            f"not {issuer!r})."
        )
    authorization, token = document.get("authorization_endpoint"), document.get("token_endpoint")
    if not isinstance(authorization, str) or not isinstance(token, str):
        raise UpstreamError(
            "The issuer's discovery document has no authorization_endpoint or token_endpoint."
        )
    return Endpoints(authorization, token)


def _json_object(what: str, reply: httpx2.Response) -> dict[str, Any]:
    if len(reply.content) > MAX_REPLY_BYTES:
        raise UpstreamError(f"The issuer's {what} answered more than {MAX_REPLY_BYTES} bytes.")
    try:
        body = json.loads(reply.content)
    except ValueError:
        body = None
    if reply.status_code != 200:
        raise UpstreamError(
            f"The issuer's {what} answered {reply.status_code}{_oauth_error(body)}.",
            status=reply.status_code,
        )
    if not isinstance(body, dict):
        raise UpstreamError(f"The issuer's {what} did not answer a JSON object.")
    return body


def _oauth_error(body: object) -> str:
    """``: invalid_grant (the code has expired)`` from an OAuth error answer, else nothing."""
    if not isinstance(body, dict) or not isinstance(body.get("error"), str):
        return ""
    described = body.get("error_description")
    said = f" ({str(described)[:200]})" if isinstance(described, str) else ""
    return f": {body['error'][:100]}{said}"


def _header(id_token: str, accepted: Sequence[str]) -> tuple[str, str | None]:
    try:
        header = jwt.get_unverified_header(id_token)
    except jwt.InvalidTokenError:
        raise _refused("it is not a well-formed JWT") from None
    algorithm, kid = header.get("alg"), header.get("kid")
    if algorithm not in accepted:
        raise _refused(f"its algorithm {str(algorithm)[:20]!r} is not accepted")
    return str(algorithm), kid if isinstance(kid, str) else None


def _name(claims: dict[str, Any]) -> str:
    for claim in _NAME_CLAIMS:
        value = claims.get(claim)
        if isinstance(value, str) and value:
            return value[:200]
    return "signed in"


def _refused(reason: str) -> AuthenticationError:
    return AuthenticationError(f"The issuer's ID token was refused: {reason}.")
