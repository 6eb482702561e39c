"""The browser the console tests drive: Debian's Chromium through Playwright, never a download.

Without Chromium (or the ``playwright`` package) the browser tests are skipped, unless
``AGENTLOOM_REQUIRE_BROWSER=1`` (set by CI), which makes them fail instead; node's absence
(the unit tests of the console's modules) is treated the same way.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REQUIRE_ENV = "AGENTLOOM_REQUIRE_BROWSER"
CHROMIUM = os.environ.get("AGENTLOOM_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def missing(what: str) -> None:
    """Skip the test for want of ``what``, or fail under ``AGENTLOOM_REQUIRE_BROWSER=1``."""
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{what} is required ({REQUIRE_ENV}=1) but missing")
    pytest.skip(f"{what} is missing (make install-test installs it; {REQUIRE_ENV}=1 fails instead)")


def chromium() -> str:
    if not Path(CHROMIUM).exists():
        missing(f"Chromium ({CHROMIUM}; apt-get install chromium)")
    return CHROMIUM


def node() -> str:
    found = shutil.which("node")
    if found is None:
        missing("node (the console's unit tests)")
        raise AssertionError  # unreachable: missing() raised
    return found
