"""``agentloom projects`` / ``agentloom keys`` on a database (``--database``), and ``serve``'s
secure default."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentloom.cli.main import exposed_without_auth, main
from agentloom.config import AuthSettings, ServerSettings, Settings


@pytest.fixture
def database(tmp_path: Path) -> list[str]:
    """``--database URL`` of a database that exists (an empty SQLite file: migrated on use)."""
    path = tmp_path / "admin.db"
    sqlite3.connect(path).close()
    return ["--database", f"sqlite:///{path}"]


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.delenv("AGENTLOOM_ADMIN_KEY", raising=False)
    return CliRunner()


def test_projects_and_keys_on_a_database(run: CliRunner, database: list[str]) -> None:
    made = run.invoke(main, ["projects", "create", "search team", *database])
    key = run.invoke(
        main, ["keys", "create", "--project", "search team", "--expires-in", "30d", *database]
    )
    listed = run.invoke(main, ["keys", "list", "--project", "search team", *database])
    projects = run.invoke(main, ["projects", "list", *database])

    assert made.exit_code == 0, made.output
    assert made.output.startswith("proj_")
    assert key.exit_code == 0, key.output
    assert key.output.startswith("sk-proj-")
    value = key.output.strip()
    assert value not in listed.output
    assert value[:11] in listed.output  # the redacted form
    key_id = listed.output.splitlines()[1].split()[0]
    assert "search team" in projects.output
    assert "proj_default" in projects.output

    revoked = run.invoke(main, ["keys", "revoke", key_id, *database])
    after = run.invoke(main, ["keys", "list", *database])
    assert revoked.exit_code == 0, revoked.output
    assert key_id not in after.output


def test_the_default_project_is_default(run: CliRunner, database: list[str]) -> None:
    key = run.invoke(main, ["keys", "create", "--project", "default", "--json", *database])

    assert key.exit_code == 0, key.output
    assert json.loads(key.output)["api_key"]["value"].startswith("sk-proj-")


def test_a_database_that_is_not_there_is_not_created(run: CliRunner, tmp_path: Path) -> None:
    missing = tmp_path / "elsewhere" / "agentloom.db"

    result = run.invoke(main, ["projects", "list", "--database", f"sqlite:///{missing}"])

    assert result.exit_code == 1
    assert f"no database at {missing}" in result.output
    assert not missing.parent.exists()


def test_command_line_mistakes_are_clear(run: CliRunner, database: list[str]) -> None:
    unknown = run.invoke(main, ["keys", "create", "--project", "nobody", *database])
    duration = run.invoke(main, ["keys", "create", "--project", "x", "--expires-in", "soon"])
    missing = run.invoke(main, ["keys", "revoke", "key_missing", *database])

    assert unknown.exit_code != 0
    assert "no active project" in unknown.output
    assert duration.exit_code != 0
    assert "30d" in duration.output
    assert missing.exit_code != 0
    assert "no API key key_missing" in missing.output


@pytest.mark.parametrize(
    ("host", "mode", "refused"),
    [
        ("127.0.0.1", None, False),
        ("localhost", None, False),
        ("::1", None, False),
        ("0.0.0.0", None, True),
        ("10.1.2.3", None, True),
        ("0.0.0.0", "none", False),
        ("0.0.0.0", "keys", False),
    ],
)
def test_serve_refuses_to_expose_a_server_without_authentication(
    host: str, mode: str | None, refused: bool
) -> None:
    settings = Settings(server=ServerSettings(host=host), auth=AuthSettings(mode=mode))  # type: ignore[arg-type]

    assert (exposed_without_auth(settings) is not None) is refused


def test_serve_says_how_to_fix_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTLOOM_AUTH", raising=False)
    result = CliRunner().invoke(main, ["serve", "--host", "0.0.0.0", "--port", "1"])

    assert result.exit_code == 2
    assert "AGENTLOOM_AUTH=keys" in result.output
    assert 'mode = "none"' in result.output
