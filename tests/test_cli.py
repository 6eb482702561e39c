"""The ``agentloom`` command line, through click's CliRunner (no server is started)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from starlette.applications import Starlette

from agentloom import __version__
from agentloom.cli.main import main


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No AGENTLOOM_* variable of the outer environment leaks in; logging is left as found."""
    for name in list(os.environ):
        if name.startswith("AGENTLOOM_"):
            monkeypatch.delenv(name)
    monkeypatch.setattr(logging, "basicConfig", lambda **_: None)
    chatty = {name: logging.getLogger(name).level for name in ("httpx", "httpx2", "openai")}
    yield
    for name, level in chatty.items():
        logging.getLogger(name).setLevel(level)


class FakeUvicorn:
    """Stands in for ``uvicorn.run``: records what ``serve`` would have run."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, dict[str, Any]]] = []

    def __call__(self, app: Any, **kwargs: Any) -> None:
        self.calls.append((app, kwargs))


@pytest.fixture
def uvicorn_run(monkeypatch: pytest.MonkeyPatch) -> FakeUvicorn:
    fake = FakeUvicorn()
    monkeypatch.setattr("uvicorn.run", fake)
    return fake


def test_version() -> None:
    result = CliRunner().invoke(main, ["--version"])

    assert result.exit_code == 0
    assert result.stdout.strip() == f"agentloom, version {__version__}"


def test_help_lists_serve() -> None:
    result = CliRunner().invoke(main, ["--help"])

    assert result.exit_code == 0
    assert "serve" in result.stdout
    assert "Responses API" in result.stdout


def test_serve_help() -> None:
    result = CliRunner().invoke(main, ["serve", "--help"])

    assert result.exit_code == 0
    for option in ("--host", "--port", "--config", "--log-level"):
        assert option in result.stdout
    assert "Run the API server." in result.stdout


def test_serve_runs_uvicorn_with_the_configured_address(
    tmp_path: Path, uvicorn_run: FakeUvicorn
) -> None:
    config = tmp_path / "agentloom.toml"
    config.write_text('[server]\nhost = "127.0.0.9"\nport = 9001\n')

    result = CliRunner().invoke(main, ["serve", "--config", str(config), "--log-level", "debug"])

    assert result.exit_code == 0, result.output
    ((app, kwargs),) = uvicorn_run.calls
    assert isinstance(app, Starlette)
    assert kwargs["host"] == "127.0.0.9"
    assert kwargs["port"] == 9001
    assert kwargs["log_level"] == "debug"


def test_command_line_address_wins_over_the_config(
    tmp_path: Path, uvicorn_run: FakeUvicorn
) -> None:
    config = tmp_path / "agentloom.toml"
    config.write_text('[server]\nhost = "127.0.0.9"\nport = 9001\n')

    result = CliRunner().invoke(
        main,
        ["serve", "--config", str(config), "--host", "127.0.0.1", "--port", "9002"],
        env={"AGENTLOOM_PORT": "9003"},
    )

    assert result.exit_code == 0, result.output
    ((_, kwargs),) = uvicorn_run.calls
    assert (kwargs["host"], kwargs["port"]) == ("127.0.0.1", 9002)


def test_serve_reads_the_environment(uvicorn_run: FakeUvicorn) -> None:
    result = CliRunner().invoke(main, ["serve"], env={"AGENTLOOM_PORT": "9003"})

    assert result.exit_code == 0, result.output
    ((_, kwargs),) = uvicorn_run.calls
    assert (kwargs["host"], kwargs["port"]) == ("127.0.0.1", 9003)


def test_serve_with_invalid_toml_exits_2(tmp_path: Path, uvicorn_run: FakeUvicorn) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[server\n")

    result = CliRunner().invoke(main, ["serve", "--config", str(config)])

    assert result.exit_code == 2
    assert result.stderr.startswith("agentloom: config file ")
    assert "not valid TOML" in result.stderr
    assert uvicorn_run.calls == []


def test_serve_with_an_unknown_key_exits_2(tmp_path: Path, uvicorn_run: FakeUvicorn) -> None:
    config = tmp_path / "typo.toml"
    config.write_text("[server]\nprot = 1\n")

    result = CliRunner().invoke(main, ["serve", "--config", str(config)])

    assert result.exit_code == 2
    assert "invalid configuration" in result.stderr
    assert "prot" in result.stderr
    assert uvicorn_run.calls == []


def test_serve_with_invalid_environment_exits_2(uvicorn_run: FakeUvicorn) -> None:
    result = CliRunner().invoke(main, ["serve"], env={"AGENTLOOM_PORT": "eighty"})

    assert result.exit_code == 2
    assert result.stderr.startswith("agentloom: invalid configuration")
    assert uvicorn_run.calls == []


def test_a_port_that_is_not_a_number_is_a_usage_error(uvicorn_run: FakeUvicorn) -> None:
    result = CliRunner().invoke(main, ["serve", "--port", "http"])

    assert result.exit_code == 2
    assert "Invalid value for '--port'" in result.stderr
    assert uvicorn_run.calls == []


def test_the_installed_entry_point_runs() -> None:
    script = Path(sys.executable).parent / "agentloom"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "agentloom.cli.main"]

    result = subprocess.run(
        [*command, "--version"], capture_output=True, text=True, timeout=30, check=False
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"agentloom, version {__version__}"


def test_several_workers_run_the_worker_factory(
    tmp_path: Path, uvicorn_run: FakeUvicorn, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "agentloom.toml"
    config.write_text("[server]\nport = 9001\n")
    monkeypatch.setenv("AGENTLOOM_CONFIG", "")  # serve sets it; undone after the test

    result = CliRunner().invoke(main, ["serve", "--config", str(config), "--workers", "3"])

    assert result.exit_code == 0, result.output
    ((app, kwargs),) = uvicorn_run.calls
    assert app == "agentloom.server.workers:worker_app"
    assert kwargs["factory"] is True
    assert kwargs["workers"] == 3
    assert kwargs["port"] == 9001
    assert os.environ["AGENTLOOM_CONFIG"] == str(config.resolve())


def test_workers_come_from_the_environment_too(uvicorn_run: FakeUvicorn) -> None:
    result = CliRunner().invoke(main, ["serve"], env={"AGENTLOOM_WORKERS": "2"})

    assert result.exit_code == 0, result.output
    ((_, kwargs),) = uvicorn_run.calls
    assert kwargs["workers"] == 2


def test_zero_workers_is_a_usage_error(uvicorn_run: FakeUvicorn) -> None:
    result = CliRunner().invoke(main, ["serve", "--workers", "0"])

    assert result.exit_code == 2
    assert uvicorn_run.calls == []
