"""``agentloom ask`` / ``chat`` through the installed entry point against an agentloom server over
a socket (the Responses path), itself backed by the fake backend."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentloom.inference.scripted import ScriptedModel, tool_call
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend
from agentloom.testing.serving import serve
from tests.cli_support import run_cli
from tests.plugins.server import make_settings


@pytest.fixture
def agentloom_url(backend: FakeBackend, tmp_path: Path) -> Iterator[str]:
    settings = make_settings(backend, f"sqlite:///{tmp_path / 'agentloom.db'}")
    with serve(create_app(settings)) as url:
        yield url


def test_ask_json_over_the_responses_api(
    agentloom_url: str, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("calculator", {"expression": "sqrt(81)"}, call_id="call_root"))
    scripted.add_turn("The square root of 81 is 9.")

    done = run_cli(
        "ask", "--json", "--tools", "calculator", "--path", "responses",
        "--model", backend.model, "--base-url", agentloom_url, "What is the root of 81?",
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["content"] == "The square root of 81 is 9."
    assert [(t["call_id"], t["output"]) for t in result["tool_results"]] == [("call_root", "9")]
    assert result["turns"] == 2
    # the server turned the function_call_output back into a tool message for the backend
    tool_message = backend.requests[1]["messages"][-1]
    assert tool_message == {"role": "tool", "tool_call_id": "call_root", "content": "9"}


def test_chat_over_the_responses_api(
    agentloom_url: str, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns("Hello, Ada.", "Your name is Ada.")

    done = run_cli(
        "chat", "--agent", "simple", "--path", "responses",
        "--model", backend.model, "--base-url", agentloom_url,
        stdin="I am Ada.\nWho am I?\n",
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["Hello, Ada.", "Your name is Ada."]
    assert [m["content"] for m in backend.requests[1]["messages"]] == [
        "I am Ada.",
        "Hello, Ada.",
        "Who am I?",
    ]
