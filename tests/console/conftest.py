"""Console fixtures: a real agentloom server on a socket (the fake backend, SQLite), one
Chromium a module and a fresh browser context per test, and where screenshots go."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentloom.config import AuthSettings, CodeInterpreterSettings, McpSettings, Settings
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend
from agentloom.testing.serving import serve
from tests.console.browser import ARGS, chromium, missing
from tests.plugins.server import make_settings
from tests.plugins.tenants import ADMIN, ADMIN_ENV

ARTIFACTS_ENV = "AGENTLOOM_TEST_ARTIFACTS"
HTTP_ERROR_NOTE = "Failed to load resource: the server responded with a status of"


@pytest.fixture
def settings_keyed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: FakeBackend
) -> Settings:
    monkeypatch.setenv(ADMIN_ENV, ADMIN)
    plain = make_settings(
        backend, f"sqlite:///{tmp_path / 'keyed.db'}", files_directory=tmp_path / "kf"
    )
    server = plain.server.model_copy(update={"usage_flush_interval": 0.1})
    auth = AuthSettings(mode="keys", admin_key_env=ADMIN_ENV)
    return plain.model_copy(update={"auth": auth, "server": server})


@pytest.fixture
def console_settings(tmp_path: Path, backend: FakeBackend) -> Settings:
    """Keys off; MCP servers on loopback allowed (the test servers), code_interpreter's
    containers under ``tmp_path``."""
    plain = make_settings(
        backend, f"sqlite:///{tmp_path / 'console.db'}", files_directory=tmp_path / "f"
    )
    mcp = McpSettings(allow_loopback=True, connect_timeout=3.0, call_timeout=3.0)
    code = CodeInterpreterSettings(
        directory=tmp_path / "containers", wall_seconds=5, cpu_seconds=5, output_kb=64
    )
    return plain.model_copy(update={"mcp": mcp, "code_interpreter": code})


def _origin(config: Settings) -> Iterator[str]:
    with serve(create_app(config)) as base_url:
        yield base_url.removesuffix("/v1")


@pytest.fixture
def origin(console_settings: Settings) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of a server without keys."""
    yield from _origin(console_settings)


@pytest.fixture
def keyed_origin(settings_keyed: Settings) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of a server with keys on (the admin key ``ADMIN``)."""
    yield from _origin(settings_keyed)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium, for one module's tests. Not for the session: Playwright's sync API keeps an
    event loop of its own current while it runs, and the async tests of other modules (run
    between) need theirs; a launch costs about half a second."""
    executable = chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("the playwright package (pip install -e '.[test]')")
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=executable, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A page in a fresh context (its own session storage). An uncaught error of the page's
    scripts, or an error it logged, fails the test; the browser's own note of an HTTP error
    does not (the console probes with 401s and 403s, and a missing trace is a 404)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(10_000)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    opened.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    yield opened
    context.close()
    assert not [e for e in errors if not e.startswith(HTTP_ERROR_NOTE)], errors


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go: ``$AGENTLOOM_TEST_ARTIFACTS/console`` or a temporary directory."""
    configured = os.environ.get(ARTIFACTS_ENV)
    folder = Path(configured) / "console" if configured else tmp_path_factory.mktemp("console")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def shoot(page: Any, artifacts: Path) -> Any:
    def screenshot(name: str) -> Path:
        path = artifacts / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return screenshot
