"""A small OIDC provider the tests run on loopback: discovery, an authorization endpoint that
signs in one configured person without asking (and checks the request: client, redirect URL,
PKCE S256), a token endpoint (code once only, the PKCE verifier, the client's secret), and its
JWKS. Its ID tokens can be spoiled on purpose (``id_token_claims``), and its token endpoint can
hang (``hang``) or fail (``failing``), to test what the server does then."""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote_plus, urlencode

import anyio
import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from agentloom.testing.serving import serve

CLIENT_ID = "agentloom-console"
KID = "idp-1"


@dataclass
class Grant:
    client_id: str
    redirect_uri: str
    challenge: str
    nonce: str


@dataclass
class OidcProvider:
    """The provider; ``issuer`` is set once it serves (``http://127.0.0.1:PORT``)."""

    project: str = "proj_default"  # the agentloom_project claim of its ID tokens
    subject: str = "user-7"
    email: str = "ada@example.com"
    client_secret: str | None = None  # set: the token endpoint wants client_secret_basic
    id_token_claims: dict[str, Any] = field(default_factory=dict)  # over the usual claims
    hang: bool = False  # the token endpoint never answers
    failing: bool = False  # the token endpoint answers 500
    issuer: str = ""
    key: rsa.RSAPrivateKey = field(
        default_factory=lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048)
    )
    grants: dict[str, Grant] = field(default_factory=dict)
    exchanged: int = 0  # codes redeemed

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/.well-known/openid-configuration", self._discovery),
                Route("/authorize", self._authorize),
                Route("/token", self._token, methods=["POST"]),
                Route("/jwks.json", self._jwks),
            ]
        )

    @property
    def jwks_url(self) -> str:
        return f"{self.issuer}/jwks.json"

    async def _discovery(self, request: Request) -> Response:
        return JSONResponse(
            {
                "issuer": self.issuer,
                "authorization_endpoint": f"{self.issuer}/authorize",
                "token_endpoint": f"{self.issuer}/token",
                "jwks_uri": self.jwks_url,
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
            }
        )

    async def _authorize(self, request: Request) -> Response:
        query = request.query_params
        wrong = _authorize_problem(query)
        if wrong:
            return JSONResponse({"error": "invalid_request", "error_description": wrong}, 400)
        code = secrets.token_urlsafe(16)
        self.grants[code] = Grant(
            query["client_id"], query["redirect_uri"], query["code_challenge"], query["nonce"]
        )
        back = urlencode({"code": code, "state": query["state"]})
        return RedirectResponse(f"{query['redirect_uri']}?{back}", status_code=302)

    async def _token(self, request: Request) -> Response:
        if self.hang:
            await anyio.sleep(60)
        if self.failing:
            return JSONResponse({"error": "server_error"}, 500)
        form = await request.form()
        grant = self.grants.pop(str(form.get("code")), None)  # a code works once
        if grant is None:
            return _oauth_error("invalid_grant", "unknown or used code")
        verifier = str(form.get("code_verifier", ""))
        if _challenge(verifier) != grant.challenge:
            return _oauth_error("invalid_grant", "the PKCE verifier does not match")
        if form.get("redirect_uri") != grant.redirect_uri:
            return _oauth_error("invalid_grant", "another redirect_uri")
        if not self._client_ok(request, form.get("client_id")):
            return _oauth_error("invalid_client", "wrong client credentials", 401)
        self.exchanged += 1
        return JSONResponse(
            {
                "access_token": secrets.token_urlsafe(16),
                "token_type": "Bearer",
                "expires_in": 300,
                "id_token": self.id_token(grant.nonce),
            }
        )

    def _client_ok(self, request: Request, client_id: object) -> bool:
        if self.client_secret is None:
            return client_id == CLIENT_ID
        scheme, _, sent = request.headers.get("authorization", "").partition(" ")
        if scheme != "Basic":
            return False
        client, _, secret = base64.b64decode(sent).decode().partition(":")
        return (unquote_plus(client), unquote_plus(secret)) == (CLIENT_ID, self.client_secret)

    def id_token(self, nonce: str, audience: str = CLIENT_ID) -> str:
        """An ID token (with ``audience``: the bearer JWT an API client gets)."""
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "aud": audience,
            "sub": self.subject,
            "email": self.email,
            "iat": now,
            "exp": now + 300,
            "nonce": nonce,
            "agentloom_project": self.project,
            **self.id_token_claims,
        }
        claims = {k: v for k, v in claims.items() if v is not None}
        return jwt.encode(claims, self.key, "RS256", {"kid": KID})

    async def _jwks(self, request: Request) -> Response:
        public = RSAAlgorithm.to_jwk(self.key.public_key(), as_dict=True)
        return JSONResponse({"keys": [{**public, "kid": KID, "use": "sig", "alg": "RS256"}]})


def _authorize_problem(query: Any) -> str | None:
    if query.get("response_type") != "code":
        return "response_type must be code"
    if query.get("client_id") != CLIENT_ID:
        return "unknown client"
    if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
        return "PKCE with S256 is required"
    if "openid" not in query.get("scope", "").split():
        return "the openid scope is required"
    if not query.get("state") or not query.get("nonce") or not query.get("redirect_uri"):
        return "state, nonce and redirect_uri are required"
    return None


def _challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def _oauth_error(error: str, description: str, status: int = 400) -> Response:
    return JSONResponse({"error": error, "error_description": description}, status)


@contextmanager
def serving(provider: OidcProvider) -> Iterator[OidcProvider]:
    """The provider on a loopback port (a thread of its own), its ``issuer`` set."""
    with serve(provider.app(), lifespan=False) as base_url:
        provider.issuer = base_url.removesuffix("/v1")
        yield provider
