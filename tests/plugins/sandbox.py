"""Tests that need the real sandbox (bubblewrap): skipped where it is missing, failed instead
when ``AGENTLOOM_REQUIRE_SANDBOX=1`` (set by CI), so CI never passes without running them."""

from __future__ import annotations

import os

import pytest

from agentloom.tools.sandbox import bwrap_available


@pytest.fixture
def requires_sandbox() -> None:
    if bwrap_available():
        return
    if os.environ.get("AGENTLOOM_REQUIRE_SANDBOX") == "1":
        pytest.fail("bubblewrap is required (AGENTLOOM_REQUIRE_SANDBOX=1) but not installed")
    pytest.skip("bubblewrap is not installed (make install adds it where it can)")
