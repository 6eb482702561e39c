"""Fixtures for the real-client tests: agentloom over a real socket, recording what it got.

``agentloom_url`` is ``http://127.0.0.1:PORT/v1`` of the app built from ``settings`` (one
``fake`` provider in front of the scripted fake backend), served by uvicorn in a thread so the
tests can block on a client subprocess. ``recorder`` holds every HTTP exchange it served. The
database is SQLite only: these tests are about the wire, and the stores have their own suites.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentloom.config import Settings
from agentloom.server.app import create_app
from agentloom.testing.serving import serve
from tests.clients.recording import Recorder


@pytest.fixture
def recorder(settings: Settings) -> Recorder:
    return Recorder(create_app(settings))


@pytest.fixture
def agentloom_url(recorder: Recorder) -> Iterator[str]:
    with serve(recorder) as url:
        yield url
