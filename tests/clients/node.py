"""Finding and running the Node clients that ``make install-test`` installs here.

``npm ci --prefix tests/clients`` puts them in ``tests/clients/node_modules``. Where they (or
``node`` itself) are missing the tests are skipped, unless ``AGENTLOOM_REQUIRE_CLIENTS=1`` (set
by CI), which makes them fail instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

CLIENTS_DIR = Path(__file__).resolve().parent
NODE_MODULES = CLIENTS_DIR / "node_modules"
REQUIRE_ENV = "AGENTLOOM_REQUIRE_CLIENTS"
# Anything a client sends past agentloom goes to a closed port instead of the internet.
NO_INTERNET = {
    "HTTP_PROXY": "http://127.0.0.1:9",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "ALL_PROXY": "http://127.0.0.1:9",
    "NO_PROXY": "127.0.0.1,localhost",
}


def require(path: Path, what: str) -> Path:
    """``path`` if it exists; else skip (or fail under ``AGENTLOOM_REQUIRE_CLIENTS=1``)."""
    if path.exists():
        return path
    message = f"{what} is not installed ({path} is missing); run `make install-test`"
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(message)
    pytest.skip(message)


def node() -> Path:
    """The ``node`` executable (skip or fail as :func:`require` does)."""
    found = shutil.which("node")
    return require(Path(found) if found else CLIENTS_DIR / "node (not on PATH)", "node")


def package(name: str) -> Path:
    """The installed npm package ``name`` (e.g. ``ai`` or ``@openai/codex``)."""
    return require(NODE_MODULES / name / "package.json", f"npm package {name}").parent


def run(
    args: Sequence[str | Path], *, env: Mapping[str, str], cwd: Path, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run a client to completion with no stdin, capturing its output as text."""
    return subprocess.run(
        [str(a) for a in args],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **NO_INTERNET, **env},
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
