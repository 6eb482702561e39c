"""The fault suite's fixtures: the app over a real socket (``live_url``, from the end-to-end
suite), with a provider timeout short enough that a silent backend is a quick failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentloom.config import Settings
from agentloom.testing.backend import FakeBackend
from tests.e2e.conftest import live_url
from tests.plugins.server import make_settings

__all__ = ["live_url", "settings"]

# seconds of backend silence before a response fails: a hang is found quickly, and a healthy
# answer on a loaded host is not (0.5 s once failed the health check after a fault in a full run)
PROVIDER_TIMEOUT = 2.0


@pytest.fixture
def settings(backend: FakeBackend, database_url: str, tmp_path: Path) -> Settings:
    return make_settings(
        backend, database_url, timeout=PROVIDER_TIMEOUT, files_directory=tmp_path / "files"
    )
