"""Schemathesis over every operation of ``GET /openapi.json``, in-process against the app (the
fake backend, SQLite, API keys on, every request made with the admin key in the default
project, so the organization's routes run as in production): requests made from the document
(its examples, then random ones; valid and invalid, and without the key) never get a 5xx, and
every answer is what the document says (its status, content type, headers and body schema,
streamed events included). Then the stateful phase, over the organization's routes and over the
rest apart: sequences of calls, each using what an earlier answer gave (the document's links: a
project made, its rate limits listed, one of them set; a vector store made, then its files),
held to the same checks.

The budget is fixed: :data:`MAX_EXAMPLES` a phase per operation and :data:`SCENARIOS` call
sequences of at most :data:`STEPS` calls for each part, derandomized (the same cases every
run), so CI time stays bounded (about 40 s on two cores, the stateful phase about 12 s of it).
What it found is fixed and has a named regression test beside the route's tests.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from hypothesis.errors import Flaky
from schemathesis.checks import not_a_server_error
from schemathesis.schemas import BaseSchema
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from starlette.applications import Starlette

from agentloom.config import AuthSettings, Settings
from agentloom.server.app import create_app
from agentloom.server.openapi import document
from agentloom.tenancy import DEFAULT_PROJECT
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import make_settings
from tests.plugins.tenants import ADMIN, ADMIN_ENV

# The budget: examples a phase per operation, whether the coverage phase (every boundary and
# invalid variant of each parameter, about two minutes more) runs, and the stateful phase's call
# sequences (each part) and their length. Deeper runs: AGENTLOOM_FUZZ_EXAMPLES=100
# AGENTLOOM_FUZZ_COVERAGE=1 AGENTLOOM_FUZZ_SCENARIOS=400 pytest tests/server/test_openapi_fuzz.py
MAX_EXAMPLES = int(os.environ.get("AGENTLOOM_FUZZ_EXAMPLES", "12"))
SCENARIOS = int(os.environ.get("AGENTLOOM_FUZZ_SCENARIOS", "60"))
STEPS = int(os.environ.get("AGENTLOOM_FUZZ_STEPS", "10"))
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
        "stateful": {"enabled": True, "max-steps": STEPS},
    },
    "request-timeout": 10,
    "max-stream-events": 200,
}


# The document of the app (the same for every configuration): one test per operation.
schema = schemathesis.openapi.from_dict(
    document(create_app(Settings()).routes), config=schemathesis.Config.from_dict(CONFIG)
)


# The admin key, in the default project: the organization's routes and every project's.
HEADERS = {"authorization": f"Bearer {ADMIN}", "openai-project": DEFAULT_PROJECT}
HYPOTHESIS = settings(deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module", params=FUZZED_DATABASES)
def fuzzed(
    request: pytest.FixtureRequest,
    _served_backend: FakeBackend,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Starlette]:
    """One app for the module on each database, keys on (Schemathesis starts its lifespan, and
    ends it after each call)."""
    folder: Path = tmp_path_factory.mktemp("openapi-fuzz")
    if request.param == "sqlite":
        url = f"sqlite:///{folder / 'fuzz.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    config = make_settings(_served_backend, url, files_directory=folder / "files")
    auth = AuthSettings(mode="keys", admin_key_env=ADMIN_ENV)
    with pytest.MonkeyPatch.context() as env:
        env.setenv(ADMIN_ENV, ADMIN)
        yield create_app(config.model_copy(update={"auth": auth}))


@schema.parametrize()
@HYPOTHESIS
def test_every_operation_answers_as_documented(case: schemathesis.Case, fuzzed: Starlette) -> None:
    case.call_and_validate(checks=CHECKS, app=fuzzed, headers=HEADERS)


# The stateful phase runs over each part apart: the organization's few operations chain far more
# often on their own (a project made, its rate limits listed, one of them set).
PARTS = {
    "organization": schema.include(path_regex="^/v1/organization/"),
    "projects": schema.exclude(path_regex="^/v1/organization/"),
}


@pytest.mark.parametrize("part", sorted(PARTS))
def test_call_sequences_answer_as_documented(fuzzed: Starlette, part: str) -> None:
    """The stateful phase: the links between operations come from the document (a path
    parameter named as an earlier answer's field), each call checked as above.

    What a step draws depends on earlier answers, and the database keeps what every sequence
    made, so Hypothesis replaying a sequence may find it draws differently (``Flaky``). As
    Schemathesis' own runner does, that is no failure unless a check failed: the sequences
    left are run again (a few times at most); a check that failed is raised."""
    run = Sequences(PARTS[part], fuzzed)
    for _ in range(3):
        if run.left < 1:
            return
        try:
            run.machine.run(settings=run.hypothesis_settings())
            return
        except Flaky:
            if run.failed:
                raise run.failed[0] from None


class Sequences:
    """The state machine of ``part`` of the document, calling ``app`` with :data:`HEADERS`; it
    counts the sequences it ran and keeps the checks that failed."""

    def __init__(self, part: BaseSchema, app: Starlette) -> None:
        self.started = 0
        self.failed: list[Exception] = []
        self.machine = self._machine(part, app)

    @property
    def left(self) -> int:
        return SCENARIOS - self.started

    def hypothesis_settings(self) -> settings:
        return settings(
            HYPOTHESIS, max_examples=self.left, stateful_step_count=STEPS, phases=[Phase.generate]
        )

    def _machine(self, part: BaseSchema, app: Starlette) -> Any:
        run = self

        class Machine(part.as_state_machine()):  # type: ignore[misc]
            def setup(self) -> None:
                run.started += 1

            def get_call_kwargs(self, case: schemathesis.Case) -> dict[str, Any]:
                return {"app": app, "headers": HEADERS}

            def validate_response(
                self, response: Any, case: schemathesis.Case, **kwargs: Any
            ) -> None:
                kwargs.pop("additional_checks", None)
                try:
                    case.validate_response(response, checks=CHECKS, transport_kwargs=kwargs)
                except Exception as exc:
                    run.failed.append(exc)
                    raise

        return Machine
