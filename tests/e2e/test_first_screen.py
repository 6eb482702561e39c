"""What ``agentloom serve`` says when it starts: one banner (where it serves, the console, the
database, who may call, each backend with its models or why it has none, the docs), one line
for the migrations it ran (none when there were none), and none of alembic's or uvicorn's."""

from __future__ import annotations

import signal
from pathlib import Path

from agentloom.testing.backend import FakeBackend
from tests.e2e.test_restart import WAIT, _env, _wait_for, agentloom_serve


def _started(backend: FakeBackend, database_url: str, tmp_path: Path, **env: str) -> str:
    log = tmp_path / f"server-{len(list(tmp_path.glob('server-*')))}.log"
    with agentloom_serve({**_env(database_url, backend), **env}, log):
        pass
    return log.read_text()


def test_the_banner_says_where_and_what(backend: FakeBackend, tmp_path: Path) -> None:
    database = tmp_path / "new.db"
    first = _started(backend, f"sqlite:///{database}", tmp_path)

    assert first.count("agentloom is serving the OpenAI API at http://127.0.0.1:") == 1
    assert "  console   http://127.0.0.1:" in first
    assert f"  database  SQLite, {database}" in first
    assert "  auth      none: every caller is the default project" in first
    assert f"  backends  default ({backend.base_url}): {backend.model}" in first
    assert "/docs (the API)" in first
    assert first.count("database migrated from empty to ") == 1
    for noise in ("alembic", "Running upgrade", "Uvicorn running on", "Started server process"):
        assert noise not in first

    again = _started(backend, f"sqlite:///{database}", tmp_path)
    assert "database migrated" not in again  # nothing to do: nothing said


def test_a_backend_down_and_keys_without_an_admin_key_are_said(
    backend: FakeBackend, tmp_path: Path
) -> None:
    output = _started(
        backend,
        f"sqlite:///{tmp_path / 'db.sqlite'}",
        tmp_path,
        AGENTLOOM_INFERENCE_BASE_URL="http://127.0.0.1:9/v1",
        AGENTLOOM_INFERENCE_MODELS="",
        AGENTLOOM_AUTH="keys",
    )
    assert "default (http://127.0.0.1:9/v1): unreachable, retrying in the background" in output
    assert "API keys, and no admin key: only project keys made earlier get in" in output
    assert "AGENTLOOM_ADMIN_KEY to a secret of your own" in output


def test_workers_say_the_banner_once(backend: FakeBackend, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    env = _env(f"sqlite:///{tmp_path / 'db.sqlite'}", backend)
    with agentloom_serve(env, log, "--workers", "2") as server:
        _wait_for(lambda: server.output().count("is ready") == 2)
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=WAIT)
    assert server.output().count("agentloom is serving the OpenAI API") == 1
    assert server.output().count("is ready") == 2
