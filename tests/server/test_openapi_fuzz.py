"""Schemathesis over every operation of ``GET /openapi.json``, in-process against the app (the
fake backend, SQLite): requests made from the document (its examples, its boundaries, then
random ones; valid and invalid) never get a 5xx, and every answer is what the document says
(its status, content type, headers and body schema, streamed events included).

The budget is fixed: :data:`MAX_EXAMPLES` a phase per operation, derandomized (the same cases
every run), so CI time stays bounded (about a minute on two cores). What it found is fixed and
has a named regression test beside the route's tests.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from starlette.applications import Starlette

from agentloom.config import Settings
from agentloom.server.app import create_app
from agentloom.server.openapi import document
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import make_settings

# The budget: examples a phase per operation, and whether the coverage phase (every boundary
# and invalid variant of each parameter, about two minutes more) runs. Deeper runs:
# AGENTLOOM_FUZZ_EXAMPLES=100 AGENTLOOM_FUZZ_COVERAGE=1 pytest tests/server/test_openapi_fuzz.py
MAX_EXAMPLES = int(os.environ.get("AGENTLOOM_FUZZ_EXAMPLES", "12"))
COVERAGE = os.environ.get("AGENTLOOM_FUZZ_COVERAGE") == "1"
FUZZED_DATABASES = os.environ.get("AGENTLOOM_FUZZ_DATABASES", "sqlite").split(",")
CHECKS = [
    not_a_server_error,
    response_schema_conformance,
    content_type_conformance,
    response_headers_conformance,
    status_code_conformance,
]
CONFIG = {
    "generation": {
        "mode": "all",
        "max-examples": MAX_EXAMPLES,
        "deterministic": True,
        "no-shrink": True,
    },
    "phases": {
        "examples": {"enabled": True},
        "coverage": {"enabled": COVERAGE},
        "fuzzing": {"enabled": True},
        "stateful": {"enabled": False},
    },
    "request-timeout": 10,
    "max-stream-events": 200,
}


# The document of the app (the same for every configuration): one test per operation.
schema = schemathesis.openapi.from_dict(
    document(create_app(Settings()).routes), config=schemathesis.Config.from_dict(CONFIG)
)


@pytest.fixture(scope="module", params=FUZZED_DATABASES)
def fuzzed(
    request: pytest.FixtureRequest,
    _served_backend: FakeBackend,
    tmp_path_factory: pytest.TempPathFactory,
) -> Starlette:
    """One app for the module on each database (Schemathesis starts its lifespan, and ends it
    after each operation's test)."""
    folder: Path = tmp_path_factory.mktemp("openapi-fuzz")
    if request.param == "sqlite":
        url = f"sqlite:///{folder / 'fuzz.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    config = make_settings(_served_backend, url, files_directory=folder / "files")
    return create_app(config)


@schema.parametrize()
@settings(deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_every_operation_answers_as_documented(case: schemathesis.Case, fuzzed: Starlette) -> None:
    case.call_and_validate(checks=CHECKS, app=fuzzed)
