"""Signing in to the console with the OIDC issuer, in Chromium: "Sign in with <issuer>" goes
through the provider on loopback (:mod:`tests.oidc_provider`) and back to the page it left,
signed in by the session cookie (never a key in storage); the playground's requests carry the
CSRF token; signing out forgets the session; pasting a key still works beside it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from playwright.sync_api import expect

from agentloom.config import AuthSettings, JwtSettings, OidcSettings, Settings
from agentloom.inference.scripted import ScriptedModel
from agentloom.server.app import create_app
from agentloom.testing.serving import serve
from tests.console.test_admin import sign_in
from tests.oidc_provider import CLIENT_ID, OidcProvider, serving
from tests.plugins.tenants import ADMIN, ADMIN_ENV
from tests.ports import unused_port


@pytest.fixture
def provider() -> Iterator[OidcProvider]:
    with serving(OidcProvider()) as running:
        yield running


@pytest.fixture
def oidc_origin(settings_keyed: Settings, provider: OidcProvider) -> Iterator[str]:
    port = unused_port()
    origin = f"http://127.0.0.1:{port}"
    jwt = JwtSettings(issuer=provider.issuer, audience="agentloom", jwks_url=provider.jwks_url)
    oidc = OidcSettings(
        client_id=CLIENT_ID, redirect_url=f"{origin}/auth/callback", display_name="Example ID"
    )
    auth = AuthSettings(mode="keys", admin_key_env=ADMIN_ENV, jwt=jwt, oidc=oidc)
    with serve(create_app(settings_keyed.model_copy(update={"auth": auth})), port=port):
        yield origin


@pytest.fixture
def project(oidc_origin: str, provider: OidcProvider) -> str:
    """A project "alpha", the one the provider's person works in."""
    made = httpx2.post(
        f"{oidc_origin}/v1/organization/projects",
        json={"name": "alpha"},
        headers={"authorization": f"Bearer {ADMIN}"},
    )
    project_id: str = made.json()["id"]
    provider.project = project_id
    return project_id


def test_sign_in_with_the_issuer_and_out(
    page: Any, oidc_origin: str, project: str, scripted: ScriptedModel, shoot: Any
) -> None:
    page.goto(f"{oidc_origin}/console/#/logs")
    link = page.get_by_role("link", name="Sign in with Example ID")
    expect(link).to_be_visible()
    shoot("sign-in-oidc")

    link.click()

    expect(page.get_by_role("heading", name="Logs")).to_be_visible()  # back where it left
    assert page.url == f"{oidc_origin}/console/#/logs"
    expect(page.locator("#session")).to_contain_text(f"ada@example.com · {project}")
    assert page.evaluate("() => Object.keys(sessionStorage)") == []  # no key kept
    cookies = {c["name"]: c for c in page.context.cookies()}
    assert cookies["agentloom_session"]["httpOnly"]
    assert cookies["agentloom_session"]["sameSite"] == "Lax"

    page.get_by_role("link", name="Playground").click()
    scripted.add_turn("Hello, Ada.")
    page.get_by_label("Input").fill("Hi")
    page.get_by_role("button", name="Send").click()  # a POST: it carries the CSRF header
    expect(page.locator(".turn")).to_have_attribute("data-status", "completed")
    expect(page.locator(".turn [data-type=message]")).to_contain_text("Hello, Ada.")
    shoot("signed-in-oidc")

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("link", name="Sign in with Example ID")).to_be_visible()
    names = {c["name"] for c in page.context.cookies()}
    assert "agentloom_session" not in names


def test_pasting_a_key_still_works_beside_the_issuer(page: Any, oidc_origin: str) -> None:
    page.goto(f"{oidc_origin}/console/")
    expect(page.get_by_role("link", name="Sign in with Example ID")).to_be_visible()

    sign_in(page, ADMIN)

    expect(page.get_by_role("link", name="Admin")).to_be_visible()


def test_a_failed_sign_in_says_why(
    page: Any, oidc_origin: str, project: str, provider: OidcProvider
) -> None:
    provider.id_token_claims = {"nonce": "someone else's"}
    page.goto(f"{oidc_origin}/console/")

    page.get_by_role("link", name="Sign in with Example ID").click()

    expect(page.get_by_role("heading", name="Sign-in failed")).to_be_visible()
    expect(page.locator("#reason")).to_contain_text("its nonce is not this sign-in's")
    page.get_by_role("link", name="Back to the console").click()
    expect(page.get_by_role("link", name="Sign in with Example ID")).to_be_visible()
