"""The console's pure modules (stream accumulation, SSE framing, the equivalent code) under
node's own test runner: ``tests/console/js/*.test.mjs``, no npm package."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.console.browser import node

TESTS = Path(__file__).parent / "js"


def test_the_console_modules_pass_their_node_tests() -> None:
    files = sorted(str(path) for path in TESTS.glob("*.test.mjs"))
    assert files
    run = subprocess.run(
        [node(), "--test", *files], capture_output=True, text=True, timeout=60, check=False
    )

    assert run.returncode == 0, run.stdout + run.stderr
    assert "# fail 0" in run.stdout
