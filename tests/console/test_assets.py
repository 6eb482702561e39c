"""The console's assets as the server serves them: from a fixed table (no path reaches the
filesystem), with their content types, ETags (a 304 when unchanged), gzip, a strict
Content-Security-Policy, nothing from another host, and small."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx2
import pytest

from agentloom.config import Settings
from agentloom.server.app import create_app
from agentloom.server.openapi import document
from agentloom.server.routes.console import ASSETS

ROOT = "http://agentloom.test"


@pytest.fixture
async def raw() -> AsyncIterator[httpx2.AsyncClient]:
    """The app without its lifespan: the console's routes need none."""
    transport = httpx2.ASGITransport(app=create_app(Settings()))
    async with httpx2.AsyncClient(transport=transport, base_url=ROOT) as client:
        yield client


async def test_the_root_and_console_lead_to_the_page(raw: httpx2.AsyncClient) -> None:
    for path in ("/", "/console"):
        reply = await raw.get(path)
        assert reply.status_code == 307
        assert reply.headers["location"] == "/console/"
    page = await raw.get("/console/")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert '<script type="module" src="app.js">' in page.text
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp
    assert "script-src 'self';" in csp
    assert "connect-src 'self'" in csp


@pytest.mark.parametrize(
    ("path", "media_type"),
    [
        ("app.js", "text/javascript; charset=utf-8"),
        ("pages/playground.js", "text/javascript; charset=utf-8"),
        ("style.css", "text/css; charset=utf-8"),
    ],
)
async def test_assets_have_their_type_an_etag_and_a_304(
    raw: httpx2.AsyncClient, path: str, media_type: str
) -> None:
    reply = await raw.get(f"/console/{path}", headers={"accept-encoding": "identity"})

    assert reply.status_code == 200
    assert reply.headers["content-type"] == media_type
    assert reply.headers["x-content-type-options"] == "nosniff"
    assert "content-encoding" not in reply.headers
    etag = reply.headers["etag"]
    again = await raw.get(f"/console/{path}", headers={"if-none-match": etag})
    assert again.status_code == 304
    assert again.content == b""
    zipped = await raw.get(f"/console/{path}", headers={"accept-encoding": "gzip, br"})
    assert zipped.headers["content-encoding"] == "gzip"
    assert zipped.content == reply.content  # httpx decodes it


@pytest.mark.parametrize(
    "path",
    [
        "/console/../pyproject.toml",
        "/console/%2e%2e/%2e%2e/pyproject.toml",
        "/console/..%2fserver%2fapp.py",
        "/console/__init__.py",
        "/console/package.json",
        "/console//etc/passwd",
        "/console/nothing.js",
    ],
)
async def test_only_the_tables_files_are_served(raw: httpx2.AsyncClient, path: str) -> None:
    reply = await raw.get(path)

    assert reply.status_code == 404
    assert reply.json()["error"]["type"] == "invalid_request_error"


def test_the_assets_are_small_and_load_nothing_from_elsewhere() -> None:
    assert {"index.html", "app.js", "api.js", "stream.js", "style.css"} <= set(ASSETS)
    assert sum(len(asset.gzipped) for asset in ASSETS.values()) < 100_000  # the budget: 500 kB
    for name, asset in ASSETS.items():
        text = asset.body.decode()
        assert not re.search(r"(?:src|href)=[\"']?(?:https?:)?//", text), name
        assert "@import" not in text, name
        assert "innerHTML" not in text, name  # data is put in as text, never parsed as markup


async def test_the_console_is_open_with_keys_on(settings_keyed: Settings) -> None:
    transport = httpx2.ASGITransport(app=create_app(settings_keyed))
    async with httpx2.AsyncClient(transport=transport, base_url=ROOT) as raw:
        assert (await raw.get("/console/app.js")).status_code == 200


def test_the_console_is_no_operation_of_the_api() -> None:
    doc = document(create_app(Settings()).routes)

    assert not [path for path in doc["paths"] if path == "/" or path.startswith("/console")]
    assert "/console/" in doc["info"]["description"]
