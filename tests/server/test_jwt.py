"""Bearer JWTs from an OIDC provider (``[auth.jwt]``): tokens signed with real RSA and EC keys,
the provider's JWKS from a file or from a local HTTP server, the app driven through the
official client, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import anyio
import httpx2
import jwt
import openai
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agentloom.auth.jwks import FileJwks
from agentloom.auth.jwt import JwtVerifier, looks_like_jwt
from agentloom.auth.keys import new_key
from agentloom.config import AuthSettings, JwtSettings, Settings
from agentloom.errors import AuthenticationError
from agentloom.testing.backend import FakeBackend
from agentloom.testing.serving import serve_async
from tests.plugins.server import audited_client
from tests.plugins.tenants import ADMIN, ADMIN_ENV, Tenant, new_tenant, sdk
from tests.server.test_tenancy import error_of

ISSUER = "https://idp.example.com/"
AUDIENCE = "agentloom"
CLAIM = "agentloom_project"

Key = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey


@cache
def rsa_key(name: str) -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@cache
def ec_key(name: str) -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def public_jwk(kid: str, key: Key) -> dict[str, Any]:
    public = key.public_key()
    if isinstance(public, rsa.RSAPublicKey):
        jwk = RSAAlgorithm.to_jwk(public, as_dict=True)
    else:
        jwk = ECAlgorithm.to_jwk(public, as_dict=True)
    return {**jwk, "kid": kid, "use": "sig"}


@dataclass
class Provider:
    """An OIDC provider: its signing keys by kid, and the JWKS it publishes."""

    keys: dict[str, Key] = field(
        default_factory=lambda: {"rsa-1": rsa_key("one"), "ec-1": ec_key("one")}
    )

    def jwks(self) -> dict[str, Any]:
        return {"keys": [public_jwk(kid, key) for kid, key in self.keys.items()]}

    def token(self, project: str | None, *, kid: str = "rsa-1", **claims: Any) -> str:
        key = self.keys.get(kid, rsa_key("stranger"))
        algorithm = "RS256" if isinstance(key, rsa.RSAPrivateKey) else "ES256"
        return jwt.encode(_claims(project, **claims), key, algorithm, {"kid": kid})


def _claims(project: str | None, **claims: Any) -> dict[str, Any]:
    now = int(time.time())
    base: dict[str, Any] = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": "user-42",
        "iat": now,
        "exp": now + 600,
        "jti": secrets.token_hex(8),  # every token its own text: none is answered from a cache
    }
    if project is not None:
        base[CLAIM] = project
    return {k: v for k, v in {**base, **claims}.items() if v is not None}


def jwt_settings(settings: Settings, **jwt_options: Any) -> Settings:
    options: dict[str, Any] = {"issuer": ISSUER, "audience": AUDIENCE, **jwt_options}
    auth = AuthSettings(
        mode="keys", admin_key_env=ADMIN_ENV, watch_interval=0.05, jwt=JwtSettings(**options)
    )
    return settings.model_copy(update={"auth": auth})


@pytest.fixture
def provider() -> Provider:
    return Provider()


@pytest.fixture
def jwks_file(provider: Provider, tmp_path: Path) -> Path:
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(provider.jwks()))
    return path


@pytest.fixture
async def raw(
    settings: Settings, jwks_file: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[httpx2.AsyncClient]:
    monkeypatch.setenv(ADMIN_ENV, ADMIN)
    async with audited_client(jwt_settings(settings, jwks_file=jwks_file)) as client:
        yield client


@pytest.fixture
async def alpha(raw: httpx2.AsyncClient) -> Tenant:
    return await new_tenant(raw, "alpha")


@pytest.fixture
async def beta(raw: httpx2.AsyncClient) -> Tenant:
    return await new_tenant(raw, "beta")


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


# --- what a valid token can do ---------------------------------------------------------------


async def test_a_jwt_works_in_its_project_and_nowhere_else(
    raw: httpx2.AsyncClient, provider: Provider, alpha: Tenant, beta: Tenant, backend: FakeBackend
) -> None:
    as_alpha = sdk(raw, provider.token(alpha.project_id))
    as_beta = sdk(raw, provider.token(beta.project_id, kid="ec-1"))  # ES256

    created = await as_alpha.responses.create(model=backend.model, input="Hi")

    assert (await alpha.client.responses.retrieve(created.id)).id == created.id  # its API key
    assert (await as_alpha.responses.retrieve(created.id)).id == created.id  # the same token
    with pytest.raises(openai.NotFoundError):
        await as_beta.responses.retrieve(created.id)
    with pytest.raises(openai.NotFoundError):
        await beta.client.responses.retrieve(created.id)


async def test_a_jwt_cannot_claim_another_project_in_the_header(
    raw: httpx2.AsyncClient, provider: Provider, alpha: Tenant, beta: Tenant
) -> None:
    client = sdk(raw, provider.token(alpha.project_id), project=beta.project_id)

    with pytest.raises(openai.AuthenticationError) as refused:
        await client.models.list()
    assert refused.value.code == "mismatched_project"


async def test_a_jwt_is_no_admin(
    raw: httpx2.AsyncClient, provider: Provider, alpha: Tenant
) -> None:
    projects = sdk(raw, admin_api_key=provider.token(alpha.project_id)).admin.organization.projects

    with pytest.raises(openai.PermissionDeniedError):
        await projects.list()


async def test_an_archived_projects_tokens_stop_working(
    raw: httpx2.AsyncClient, provider: Provider, alpha: Tenant
) -> None:
    token = provider.token(alpha.project_id)
    assert (await raw.get("/models", headers=bearer(token))).status_code == 200

    await sdk(raw, admin_api_key=ADMIN).admin.organization.projects.archive(alpha.project_id)

    error = error_of(await raw.get("/models", headers=bearer(token)), 401)
    assert "archived" in error["message"]


# --- what is refused -------------------------------------------------------------------------


def _unsigned(header: dict[str, Any], claims: dict[str, Any], secret: bytes = b"") -> str:
    """A token put together by hand (what PyJWT refuses to make): ``alg`` as given, signed
    with HMAC-SHA256 under ``secret`` when there is one."""

    def segment(value: bytes) -> str:
        return base64.urlsafe_b64encode(value).rstrip(b"=").decode()

    head = f"{segment(json.dumps(header).encode())}.{segment(json.dumps(claims).encode())}"
    signature = hmac.new(secret, head.encode(), hashlib.sha256).digest() if secret else b""
    return f"{head}.{segment(signature)}"


def _public_pem() -> bytes:
    return (
        rsa_key("one")
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )


REFUSED: dict[str, tuple[Callable[[Provider, str], str], str]] = {
    "expired": (lambda p, pid: p.token(pid, exp=int(time.time()) - 120), "expired"),
    "not yet valid": (lambda p, pid: p.token(pid, nbf=int(time.time()) + 120), "not valid yet"),
    "wrong issuer": (lambda p, pid: p.token(pid, iss="https://evil.example/"), "wrong issuer"),
    "wrong audience": (lambda p, pid: p.token(pid, aud="someone-else"), "wrong audience"),
    "no expiry": (lambda p, pid: p.token(pid, exp=None), "'exp'"),
    "other key": (
        lambda p, pid: jwt.encode(_claims(pid), rsa_key("stranger"), "RS256", {"kid": "rsa-1"}),
        "signature does not verify",
    ),
    "unknown kid": (lambda p, pid: p.token(pid, kid="rsa-9"), "not one of the issuer's keys"),
    "a long unknown kid, cut short": (
        lambda p, pid: p.token(pid, kid="k" * 500),
        "kkk...) is not one of the issuer's keys",
    ),
    "alg none": (
        lambda p, pid: _unsigned({"alg": "none", "kid": "rsa-1"}, _claims(pid)),
        "'none' is not accepted",
    ),
    "HS256 keyed with the public key": (
        lambda p, pid: _unsigned({"alg": "HS256", "kid": "rsa-1"}, _claims(pid), _public_pem()),
        "'HS256' is not accepted",
    ),
    "RS256 against an EC key": (
        lambda p, pid: jwt.encode(_claims(pid), rsa_key("one"), "RS256", {"kid": "ec-1"}),
        "cannot verify RS256",
    ),
    "no project claim": (lambda p, pid: p.token(None), f"no '{CLAIM}' claim"),
    "unknown project": (lambda p, pid: p.token("proj_nowhere"), "does not exist"),
    "not a JWT": (lambda p, pid: "eyJhbGciOi.garbage!.x", "Incorrect API key"),
    "malformed": (lambda p, pid: "eyJub3Q.anNvbg.c2ln", "not a well-formed JWT"),
}


@pytest.mark.parametrize("case", list(REFUSED))
async def test_bad_tokens_are_a_401_saying_why(
    raw: httpx2.AsyncClient, provider: Provider, alpha: Tenant, case: str
) -> None:
    make, reason = REFUSED[case]
    token = make(provider, alpha.project_id)

    error = error_of(await raw.get("/models", headers=bearer(token)), 401)

    assert error["code"] == "invalid_api_key"
    assert reason in error["message"]
    assert token not in error["message"]


async def test_tokens_refused_through_the_sdk(
    raw: httpx2.AsyncClient, provider: Provider, alpha: Tenant
) -> None:
    client = sdk(raw, provider.token(alpha.project_id, exp=int(time.time()) - 3600))

    with pytest.raises(openai.AuthenticationError) as refused:
        await client.models.list()
    assert refused.value.code == "invalid_api_key"
    assert "expired" in str(refused.value.message)


def test_api_keys_never_look_like_jwts(provider: Provider) -> None:
    assert looks_like_jwt(provider.token("proj_x"))
    assert looks_like_jwt(_unsigned({"alg": "none"}, {}))
    assert not looks_like_jwt(new_key())
    assert not looks_like_jwt(ADMIN)
    assert not looks_like_jwt("a.b.c")


# --- the JWKS over HTTP ----------------------------------------------------------------------


@dataclass
class JwksServer:
    """A provider's JWKS endpoint: what it publishes, how often it was asked, and whether it
    is failing."""

    provider: Provider
    fetches: int = 0
    failing: bool = False

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/jwks.json", self._jwks)])

    async def _jwks(self, request: Request) -> Response:
        self.fetches += 1
        if self.failing:
            return Response("down", status_code=503)
        return JSONResponse(self.provider.jwks())


@pytest.fixture
async def jwks_server(provider: Provider) -> AsyncIterator[tuple[JwksServer, str]]:
    server = JwksServer(provider)
    async with serve_async(server.app(), lifespan=False) as base_url:
        yield server, f"{base_url}/jwks.json"


async def test_a_rotated_key_is_fetched_and_a_withdrawn_one_stops_working(
    settings: Settings,
    jwks_server: tuple[JwksServer, str],
    provider: Provider,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ADMIN_ENV, ADMIN)
    server, url = jwks_server
    async with audited_client(jwt_settings(settings, jwks_url=url, jwks_refetch_seconds=0)) as raw:
        alpha = await new_tenant(raw, "alpha")
        old = provider.token(alpha.project_id)
        assert (await raw.get("/models", headers=bearer(old))).status_code == 200
        assert server.fetches == 1  # at start

        provider.keys = {"rsa-2": rsa_key("two")}  # the provider rotates
        new = provider.token(alpha.project_id, kid="rsa-2")
        assert (await raw.get("/models", headers=bearer(new))).status_code == 200
        assert server.fetches == 2
        withdrawn = error_of(await raw.get("/models", headers=bearer(old)), 401)

    assert "'rsa-1'" in withdrawn["message"]


async def test_unknown_kids_fetch_at_most_once_per_interval(
    settings: Settings, jwks_server: tuple[JwksServer, str], provider: Provider
) -> None:
    server, url = jwks_server
    async with audited_client(jwt_settings(settings, jwks_url=url)) as raw:
        for kid in ("rsa-7", "rsa-8", "rsa-9"):
            token = provider.token("proj_default", kid=kid)
            assert (await raw.get("/models", headers=bearer(token))).status_code == 401

    assert server.fetches == 1  # the read at start; the unknown kids wait for the interval


async def test_a_failing_jwks_endpoint_keeps_the_keys_held(
    settings: Settings,
    jwks_server: tuple[JwksServer, str],
    provider: Provider,
    caplog: pytest.LogCaptureFixture,
) -> None:
    server, url = jwks_server
    config = jwt_settings(settings, jwks_url=url, jwks_cache_seconds=0.01, jwks_refetch_seconds=0)
    async with audited_client(config) as raw:
        server.failing = True
        await asyncio.sleep(0.02)  # the keys are stale: the next token reads them again
        token = provider.token("proj_default")
        assert (await raw.get("/models", headers=bearer(token))).status_code == 200

    assert server.fetches >= 2
    assert any("could not load the JWKS" in r.getMessage() for r in caplog.records)


# --- the verifier on its own -----------------------------------------------------------------


class Projects:
    """Which projects are active (the key verifier's answer, without a database)."""

    def __init__(self, *active: str) -> None:
        self.active = set(active)

    async def project_active(self, project_id: str) -> bool:
        return project_id in self.active


def verifier_for(jwks_file: Path, **options: Any) -> JwtVerifier:
    settings = JwtSettings(issuer=ISSUER, audience=AUDIENCE, jwks_file=jwks_file, **options)
    return JwtVerifier(settings, FileJwks(jwks_file), Projects("proj_a"))


async def test_a_verified_token_is_remembered(provider: Provider, jwks_file: Path) -> None:
    verifier = verifier_for(jwks_file, jwks_cache_seconds=0.001)
    token = provider.token("proj_a")

    first = await verifier.verify(token)
    await anyio.Path(jwks_file).write_text('{"keys": []}')  # a token checked again finds no key
    await asyncio.sleep(0.01)
    again = await verifier.verify(token)

    assert (first.project_id, first.key_id) == ("proj_a", "jwt:user-42")
    assert again == first
    with pytest.raises(AuthenticationError, match="not one of the issuer's keys"):
        await verifier.verify(provider.token("proj_a"))


async def test_a_long_subject_is_named_by_its_hash(provider: Provider, jwks_file: Path) -> None:
    verifier = verifier_for(jwks_file)

    short = await verifier.verify(provider.token("proj_a", sub="alice"))
    long = await verifier.verify(provider.token("proj_a", sub="x" * 300))
    none = await verifier.verify(provider.token("proj_a", sub=None))

    assert short.key_id == "jwt:alice"
    assert long.key_id is not None
    assert long.key_id.startswith("jwt:sha256:")
    assert len(long.key_id) <= 128
    assert none.key_id is None


async def test_a_remembered_token_expires(provider: Provider, jwks_file: Path) -> None:
    verifier = verifier_for(jwks_file, leeway_seconds=0)
    expires = int(time.time()) + 2  # at least a whole second away, however slow the machine
    token = provider.token("proj_a", exp=expires)

    assert (await verifier.verify(token)).expires_at == expires
    await asyncio.sleep(expires - time.time() + 0.01)

    with pytest.raises(AuthenticationError, match="expired"):
        await verifier.verify(token)


async def test_a_token_of_an_inactive_project_is_refused(
    provider: Provider, jwks_file: Path
) -> None:
    verifier = verifier_for(jwks_file)
    token = provider.token("proj_b")

    with pytest.raises(AuthenticationError, match="'proj_b' does not exist or is archived"):
        await verifier.verify(token)


async def test_an_unreadable_jwks_file_is_logged_and_refuses_tokens(
    provider: Provider, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    verifier = verifier_for(tmp_path / "missing.json")
    with caplog.at_level(logging.WARNING):
        await verifier.start()

    with pytest.raises(AuthenticationError, match="not one of the issuer's keys"):
        await verifier.verify(provider.token("proj_a"))
    assert any("missing.json" in r.getMessage() for r in caplog.records)
