"""``agentloom ask`` pointed at an agentloom server (over a socket) works without ``--path``:
the server serves Chat Completions too. A 404 says what to try."""

from __future__ import annotations

from agentloom.inference.scripted import ScriptedModel
from agentloom.testing.backend import FakeBackend
from tests.cli_support import run_cli
from tests.clients.recording import Recorder


def test_ask_through_agentloom_needs_no_path(
    agentloom_url: str, recorder: Recorder, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Paris.")

    done = run_cli("ask", "--model", backend.model, "--base-url", agentloom_url, "Capital?")

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Paris."
    assert len(recorder.posts("/chat/completions")) == 1


def test_a_404_says_what_to_try(agentloom_url: str) -> None:
    done = run_cli("ask", "--model", "no-such-model", "--base-url", agentloom_url, "hi")

    assert done.returncode == 1
    assert done.stderr.startswith("agentloom: the model's endpoint failed: ")
    assert "no-such-model" in done.stderr
    assert "--path completions or --path responses" in done.stderr
    assert "GET /v1/models" in done.stderr
    assert len(done.stderr.splitlines()) == 1
