"""Running the installed ``agentloom`` entry point in tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agentloom.testing.backend import FakeBackend

AGENTLOOM = Path(sys.executable).parent / "agentloom"


def run_cli(
    *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``agentloom ARGS`` with no AGENTLOOM_* / OPENAI_* variable of the outer environment
    (but those of ``env``)."""
    outer = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTLOOM_", "OPENAI_"))}
    env = {**outer, **(env or {})}
    return subprocess.run(
        [str(AGENTLOOM), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


def connect(backend: FakeBackend) -> list[str]:
    return ["--model", backend.model, "--base-url", backend.base_url]
