"""The command line's import budget: what a command imports before it does its work, counted
in modules (a timing would flake; the modules are what costs the time).

``--version`` and ``--help`` import click and the command modules only (measured: ~0.1 s);
``serve``'s configuration errors are found and told before the server, its web framework or
its database layer is imported (measured: ~0.4 s, against ~4 s when the refusal came after the
server's import); the commands that talk to a server leave the ``openai`` package and the server
out (measured: ~1 s of import).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# Run as the entry point runs: the ownership check, then the command line.
_PROBE = """
import json, sys
sys.argv = ["agentloom", *json.loads(sys.argv[1])]
from agentloom_server import main
try:
    main()
except SystemExit:
    pass
sys.__stdout__.write("\\n" + json.dumps(sorted(sys.modules)))
"""
# What a start-up must not import: the server, its web stack, its storage, the models' SDKs.
HEAVY = (
    "agentloom.server",
    "agentloom.storage",
    "agentloom.engine",
    "alembic",
    "asyncpg",
    "mcp",
    "numpy",
    "onnxruntime",
    "openai",
    "sqlalchemy",
    "starlette",
    "uvicorn",
)
# What --version and --help may import of agentloom: the package and its command modules.
COMMAND_LINE = ("agentloom", "agentloom.cli", "agentloom_server")


def imported(*args: str, cwd: Path) -> list[str]:
    """The modules loaded once ``agentloom ARGS`` has done its work (or refused)."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(args)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        check=False,
    )
    modules: list[str] = json.loads(done.stdout.rsplit("\n", 1)[-1])
    return modules


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


@pytest.mark.parametrize(
    "args",
    [
        ("--version",),
        ("--help",),
        ("agents", "--help"),
        ("eval", "--help"),
        ("eval", "run", "--help"),
    ],
)
def test_version_and_help_import_the_command_line_alone(
    args: tuple[str, ...], tmp_path: Path
) -> None:
    modules = imported(*args, cwd=tmp_path)
    ours = [m for m in modules if _within(m, ("agentloom", "agentloom_server"))]
    assert "agentloom.cli.main" in ours
    assert [m for m in ours if not _within(m, COMMAND_LINE)] == []
    assert not [m for m in modules if _within(m, (*HEAVY, "pydantic", "httpx2", "anyio"))]


def test_a_refused_bind_is_told_before_the_server_is_imported(tmp_path: Path) -> None:
    modules = imported("serve", "--host", "0.0.0.0", cwd=tmp_path)
    assert "agentloom.config" in modules  # the configuration was read and checked
    assert not [m for m in modules if _within(m, HEAVY)]


def test_an_unknown_setting_is_told_before_the_server_is_imported(tmp_path: Path) -> None:
    config = tmp_path / "agentloom.toml"
    config.write_text("[server]\nno_such_setting = 1\n")
    modules = imported("serve", "--config", str(config), cwd=tmp_path)
    assert "agentloom.config" in modules
    assert not [m for m in modules if _within(m, HEAVY)]


def test_a_command_that_talks_to_a_server_leaves_the_sdk_and_the_server_out(
    tmp_path: Path,
) -> None:
    modules = imported("agents", "list", "--base-url", "http://127.0.0.1:9/v1", cwd=tmp_path)
    assert "agentloom.agents.managed_client" in modules  # it tried the server
    assert not [m for m in modules if _within(m, HEAVY)]


def test_the_agents_package_names_each_export_once() -> None:
    """``agentloom.agents`` imports its names on first use: each one it exports has a home."""
    import agentloom.agents as package

    assert sorted(package.__all__) == sorted(package._HOME)
    assert all(getattr(package, name) is not None for name in package.__all__)
