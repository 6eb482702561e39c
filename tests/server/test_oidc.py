"""Signing in to the console with OIDC (``[auth.oidc]``): the whole authorization code flow with
PKCE against a provider on loopback (:mod:`tests.oidc_provider`), the session cookie admitted at
the edge with its CSRF header, and each refusal: a bad state, a wrong nonce, an expired or
misaddressed ID token, a missing CSRF header, a tampered cookie, an issuer that is down."""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from pydantic import ValidationError

from agentloom.auth.sessions import (
    CSRF_COOKIE,
    LOGIN_COOKIE,
    SESSION_COOKIE,
    LoginStart,
    Session,
    Sessions,
)
from agentloom.config import AuthSettings, JwtSettings, OidcSettings, Settings, load_settings
from agentloom.errors import AuthenticationError, PermissionDeniedError
from agentloom.sealing import Sealer, SealingKey
from agentloom.testing.backend import FakeBackend
from tests.oidc_provider import CLIENT_ID, OidcProvider, serving
from tests.plugins.server import audited_client
from tests.plugins.tenants import ADMIN, ADMIN_ENV, Tenant, new_tenant
from tests.server.test_tenancy import error_of

ORIGIN = "http://agentloom.test"
CALLBACK = f"{ORIGIN}/auth/callback"


def oidc_settings(settings: Settings, provider: OidcProvider, **options: Any) -> Settings:
    jwt = JwtSettings(issuer=provider.issuer, audience="agentloom", jwks_url=provider.jwks_url)
    oidc = OidcSettings(**{"client_id": CLIENT_ID, "redirect_url": CALLBACK, **options})
    auth = AuthSettings(mode="keys", admin_key_env=ADMIN_ENV, jwt=jwt, oidc=oidc)
    return settings.model_copy(update={"auth": auth})


@pytest.fixture
def provider() -> Iterator[OidcProvider]:
    with serving(OidcProvider()) as running:
        yield running


@pytest.fixture
async def raw(
    settings: Settings, provider: OidcProvider, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[httpx2.AsyncClient]:
    monkeypatch.setenv(ADMIN_ENV, ADMIN)
    async with audited_client(oidc_settings(settings, provider, timeout=1.0)) as client:
        yield client


@pytest.fixture
async def alpha(raw: httpx2.AsyncClient, provider: OidcProvider) -> Tenant:
    tenant = await new_tenant(raw, "alpha")
    provider.project = tenant.project_id  # the person's ID tokens name alpha
    return tenant


async def to_callback(raw: httpx2.AsyncClient) -> str:
    """What the browser does up to the callback: /auth/login, then the provider's page, which
    sends it back with a code; the callback URL it is sent to."""
    login = await raw.get(f"{ORIGIN}/auth/login", params={"next": "/console/#/logs"})
    assert login.status_code == 302, login.text
    async with httpx2.AsyncClient() as browser:
        issuer = await browser.get(login.headers["location"])
    assert issuer.status_code == 302, issuer.text
    back: str = issuer.headers["location"]
    assert back.startswith(CALLBACK)
    return back


async def sign_in(raw: httpx2.AsyncClient) -> httpx2.Response:
    return await raw.get(await to_callback(raw))


def csrf(raw: httpx2.AsyncClient) -> dict[str, str]:
    return {"x-csrf-token": raw.cookies[CSRF_COOKIE]}


def set_cookies(reply: httpx2.Response) -> dict[str, str]:
    """Each cookie the reply sets, by name: its whole Set-Cookie line."""
    lines = reply.headers.get_list("set-cookie")
    return {line.split("=", 1)[0]: line for line in lines}


# --- the flow --------------------------------------------------------------------------------


async def test_signing_in_works_as_the_persons_project(
    raw: httpx2.AsyncClient, provider: OidcProvider, alpha: Tenant, backend: FakeBackend
) -> None:
    signed = await sign_in(raw)

    assert signed.status_code == 303
    assert signed.headers["location"] == "/console/#/logs"
    cookies = set_cookies(signed)
    session = cookies[SESSION_COOKIE].lower()
    for attribute in ("httponly", "samesite=lax", "path=/"):
        assert attribute in session
    assert "secure" not in session  # served over http here
    assert "httponly" not in cookies[CSRF_COOKIE].lower()  # the console reads it
    assert "max-age=0" in cookies[LOGIN_COOKIE].lower()  # the login is over
    assert provider.exchanged == 1

    created = await raw.post(
        "/responses", json={"model": backend.model, "input": "Hi"}, headers=csrf(raw)
    )
    assert created.status_code == 200, created.text
    mine = await alpha.client.responses.retrieve(created.json()["id"])  # alpha's key sees it
    assert mine.id == created.json()["id"]
    who = (await raw.get(f"{ORIGIN}/auth/session")).json()
    assert who["session"]["name"] == "ada@example.com"
    assert who["session"]["project_id"] == alpha.project_id
    assert who["oidc"]["issuer"] == provider.issuer


async def test_the_session_is_the_same_principal_as_the_persons_jwt(
    raw: httpx2.AsyncClient, provider: OidcProvider, alpha: Tenant
) -> None:
    await sign_in(raw)
    created = await raw.post("/vector_stores", json={"name": "notes"}, headers=csrf(raw))
    bearer = {"authorization": f"Bearer {provider.id_token('-', audience='agentloom')}"}

    found = await raw.get(f"/vector_stores/{created.json()['id']}", headers=bearer)

    assert found.status_code == 200, found.text


async def test_the_session_is_no_admin(raw: httpx2.AsyncClient, alpha: Tenant) -> None:
    await sign_in(raw)

    error_of(await raw.get("/organization/projects"), 403)


async def test_a_bearer_key_wins_over_the_cookie(raw: httpx2.AsyncClient, alpha: Tenant) -> None:
    beta = await new_tenant(raw, "beta")
    await sign_in(raw)

    created = await raw.post("/vector_stores", json={}, headers=beta.headers)  # no CSRF needed

    assert created.status_code == 200, created.text
    assert (await beta.client.vector_stores.retrieve(created.json()["id"])).id


async def test_signing_out_forgets_the_session(raw: httpx2.AsyncClient, alpha: Tenant) -> None:
    await sign_in(raw)
    error_of(await raw.post(f"{ORIGIN}/auth/logout"), 403)  # not without the CSRF header

    out = await raw.post(f"{ORIGIN}/auth/logout", headers=csrf(raw))

    assert out.status_code == 204
    assert SESSION_COOKIE not in raw.cookies
    error_of(await raw.get("/models"), 401)


async def test_a_confidential_client_sends_its_secret(
    settings: Settings, provider: OidcProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ADMIN_ENV, ADMIN)
    provider.client_secret = "s3cret/+&"
    config = oidc_settings(settings, provider, client_secret="s3cret/+&")
    async with audited_client(config) as raw:
        assert (await sign_in(raw)).status_code == 303
        assert (await raw.get("/models")).status_code == 200


# --- what is refused -------------------------------------------------------------------------


async def test_state_changes_need_the_csrf_header(raw: httpx2.AsyncClient, alpha: Tenant) -> None:
    await sign_in(raw)

    missing = error_of(await raw.post("/vector_stores", json={}), 403)
    wrong = error_of(
        await raw.post("/vector_stores", json={}, headers={"x-csrf-token": "guess"}), 403
    )

    assert missing["code"] == "csrf_token_missing"
    assert wrong["code"] == "csrf_token_mismatch"
    assert (await raw.get("/vector_stores")).status_code == 200  # reading needs none


async def test_a_tampered_session_cookie_is_refused(raw: httpx2.AsyncClient, alpha: Tenant) -> None:
    await sign_in(raw)
    sealed = raw.cookies[SESSION_COOKIE]
    flipped = sealed[:-2] + ("A" if sealed[-2] != "A" else "B") + sealed[-1]
    raw.cookies.set(SESSION_COOKIE, flipped, domain="agentloom.test")

    error = error_of(await raw.get("/models"), 401)

    assert "session cookie is not valid" in error["message"]


async def test_a_bad_state_is_a_400(raw: httpx2.AsyncClient, alpha: Tenant) -> None:
    back = await to_callback(raw)
    forged = back.replace("state=", "state=x")

    reply = await raw.get(forged)

    assert reply.status_code == 400
    assert "state does not match" in reply.text
    assert SESSION_COOKIE not in set_cookies(reply)


async def test_a_callback_this_browser_did_not_start_is_a_400(
    raw: httpx2.AsyncClient, alpha: Tenant
) -> None:
    back = await to_callback(raw)
    raw.cookies.clear()  # another browser, or the login cookie expired

    reply = await raw.get(back)

    assert reply.status_code == 400
    assert "not started by this browser" in reply.text


async def test_a_callback_replayed_is_refused(raw: httpx2.AsyncClient, alpha: Tenant) -> None:
    back = await to_callback(raw)
    assert (await raw.get(back)).status_code == 303

    assert (await raw.get(back)).status_code == 400  # its login cookie is gone


async def test_the_issuer_saying_no_is_a_401_naming_why(
    raw: httpx2.AsyncClient, alpha: Tenant
) -> None:
    await raw.get(f"{ORIGIN}/auth/login")

    reply = await raw.get(CALLBACK, params={"error": "access_denied", "error_description": "no"})

    assert reply.status_code == 401
    assert "access_denied (no)" in reply.text


def _expired() -> dict[str, Any]:
    return {"exp": int(time.time()) - 600, "iat": int(time.time()) - 900}


BAD_ID_TOKENS: dict[str, tuple[Any, str]] = {
    "wrong nonce": ({"nonce": "another"}, "its nonce is not this sign-in"),
    "expired": (_expired, "the token has expired"),
    "wrong audience": ({"aud": "someone-else"}, "wrong audience"),
    "wrong issuer": ({"iss": "https://evil.example"}, "wrong issuer"),
    "no nonce": ({"nonce": None}, "no 'nonce' claim"),
    "no project": ({"agentloom_project": None}, "no 'agentloom_project' claim"),
    "unknown project": ({"agentloom_project": "proj_nowhere"}, "does not exist or is archived"),
}


@pytest.mark.parametrize("case", list(BAD_ID_TOKENS))
async def test_a_bad_id_token_is_a_401_saying_why(
    raw: httpx2.AsyncClient, provider: OidcProvider, alpha: Tenant, case: str
) -> None:
    claims, reason = BAD_ID_TOKENS[case]
    provider.id_token_claims = claims() if callable(claims) else claims

    reply = await sign_in(raw)

    assert reply.status_code == 401, reply.text
    assert reason in reply.text
    assert SESSION_COOKIE not in set_cookies(reply)


async def test_an_issuer_that_hangs_is_a_504_not_a_wait(
    raw: httpx2.AsyncClient, provider: OidcProvider, alpha: Tenant
) -> None:
    provider.hang = True

    reply = await sign_in(raw)

    assert reply.status_code == 504
    assert "token endpoint did not answer within 1 s" in reply.text


async def test_an_issuer_that_fails_is_a_502_naming_its_answer(
    raw: httpx2.AsyncClient, provider: OidcProvider, alpha: Tenant
) -> None:
    provider.failing = True

    reply = await sign_in(raw)

    assert reply.status_code == 502
    assert "answered 500: server_error" in reply.text


async def test_an_issuer_that_is_down_is_a_503(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(ADMIN_ENV, ADMIN)
    with serving(OidcProvider()) as gone:
        pass  # its port is closed now
    async with audited_client(oidc_settings(settings, gone, timeout=1.0)) as raw:
        reply = await raw.get(f"{ORIGIN}/auth/login")

    assert reply.status_code == 503
    assert "discovery document cannot be reached" in reply.text


async def test_secure_cookies_over_https(
    settings: Settings, provider: OidcProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ADMIN_ENV, ADMIN)
    config = oidc_settings(settings, provider, redirect_url="https://agentloom.test/auth/callback")
    async with audited_client(config) as raw:
        login = await raw.get(f"{ORIGIN}/auth/login")

    assert "secure" in set_cookies(login)[LOGIN_COOKIE].lower()


async def test_without_oidc_there_is_no_sign_in(raw_keyed: httpx2.AsyncClient) -> None:
    assert (await raw_keyed.get(f"{ORIGIN}/auth/login")).status_code == 404
    assert (await raw_keyed.get(f"{ORIGIN}/auth/session")).json() == {
        "oidc": None,
        "session": None,
    }


@pytest.fixture
async def raw_keyed(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[httpx2.AsyncClient]:
    monkeypatch.setenv(ADMIN_ENV, ADMIN)
    auth = AuthSettings(mode="keys", admin_key_env=ADMIN_ENV)
    async with audited_client(settings.model_copy(update={"auth": auth})) as client:
        yield client


# --- the sessions on their own ---------------------------------------------------------------


class Projects:
    async def project_active(self, project_id: str) -> bool:
        return project_id == "proj_a"


def _session(**changes: Any) -> Session:
    fields: dict[str, Any] = {
        "project_id": "proj_a",
        "key_id": "jwt:u",
        "name": "u",
        "csrf": "token",
        "expires_at": time.time() + 60,
    }
    return Session(**{**fields, **changes})


async def test_an_expired_session_is_refused() -> None:
    sessions = Sessions(Sealer([SealingKey.new()]), Projects())
    sealed = sessions.seal_session(_session(expires_at=time.time() - 1))

    with pytest.raises(AuthenticationError, match="the session has expired"):
        await sessions.principal(sealed, None, changes=False)


async def test_a_session_sealed_elsewhere_or_for_a_login_is_refused() -> None:
    sessions = Sessions(Sealer([SealingKey.new()]), Projects())
    other = Sessions(Sealer([SealingKey.new()]), Projects())
    login = sessions.seal_login(LoginStart.new("/console/", 60))

    for sealed in (other.seal_session(_session()), login, "", "al1.x.y"):
        with pytest.raises(AuthenticationError, match="not valid"):
            await sessions.principal(sealed, None, changes=False)


async def test_a_session_checks_its_csrf_token_only_for_changes() -> None:
    sessions = Sessions(Sealer([SealingKey.new()]), Projects())
    sealed = sessions.seal_session(_session())

    assert (await sessions.principal(sealed, None, changes=False)).project_id == "proj_a"
    assert (await sessions.principal(sealed, "token", changes=True)).key_id == "jwt:u"
    with pytest.raises(PermissionDeniedError, match="X-CSRF-Token"):
        await sessions.principal(sealed, None, changes=True)


# --- the settings ----------------------------------------------------------------------------

DOCS = Path(__file__).resolve().parents[2] / "docs" / "auth.md"


def test_the_documented_settings_load(tmp_path: Path) -> None:
    section = DOCS.read_text().split("## Signing in to the console (OIDC)")[1]
    example = section.split("```toml\n")[1].split("```")[0]
    path = tmp_path / "agentloom.toml"
    path.write_text(example)

    oidc = load_settings(path, env={}).auth.oidc

    assert oidc is not None
    assert oidc.secure
    assert oidc.client_id == "agentloom-console"


JWT = {"issuer": "https://idp.example.com", "audience": "a", "jwks_url": "https://idp/jwks"}
OIDC = {"client_id": "c", "redirect_url": "https://a.example/auth/callback"}
WRONG_SETTINGS: dict[str, tuple[dict[str, Any], str]] = {
    "no [auth.jwt]": ({"mode": "keys", "oidc": OIDC}, "needs [auth.jwt]"),
    "an http issuer": (
        {"mode": "keys", "jwt": {**JWT, "issuer": "http://idp.example.com"}, "oidc": OIDC},
        "issuer, with [auth.oidc], must be an https URL",
    ),
    "no openid scope": (
        {"mode": "keys", "jwt": JWT, "oidc": {**OIDC, "scopes": ["email"]}},
        "must include 'openid'",
    ),
    "a relative redirect": (
        {"mode": "keys", "jwt": JWT, "oidc": {**OIDC, "redirect_url": "/auth/callback"}},
        "absolute http(s) URL",
    ),
}


@pytest.mark.parametrize("case", list(WRONG_SETTINGS))
def test_wrong_settings_say_what_is_wrong(case: str) -> None:
    given, message = WRONG_SETTINGS[case]

    with pytest.raises(ValidationError, match=re.escape(message)):
        AuthSettings.model_validate(given)
