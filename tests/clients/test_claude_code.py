"""Claude Code (``@anthropic-ai/claude-code``) with agentloom as its Anthropic API, over a real
socket: a plain turn, and a turn where the model runs a shell command through Claude Code's
``Bash`` tool and answers with what it printed. The scripted model behind the fake backend plays
the model; every request Claude Code made got an answer (no 4xx/5xx)."""

from __future__ import annotations

from pathlib import Path

from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import ScriptedModel, Turn, tool_call
from agentloom.testing.backend import FakeBackend
from tests.clients import claude_code
from tests.clients.recording import Recorder

MARKER = "agentloom-tool-ok"


def _said(request: ChatRequest) -> str:
    """What the request's messages hold, as text (tool results included)."""
    return "\n".join(str(m.content) for m in request.messages)


def test_a_plain_turn(
    agentloom_url: str,
    recorder: Recorder,
    backend: FakeBackend,
    scripted: ScriptedModel,
    tmp_path: Path,
) -> None:
    scripted.respond_with(lambda _: "Hello from agentloom.")

    run = claude_code.run(
        "Say hello.", base_url=agentloom_url, model=backend.model, scratch=tmp_path
    )

    assert run.returncode == 0, run.describe()
    assert run.result.get("result") == "Hello from agentloom.", run.describe()
    assert run.result.get("is_error") is False
    assert recorder.posts("/messages"), "Claude Code called the Messages API"
    assert not recorder.failures(), [(e.path, e.status) for e in recorder.failures()]


def test_a_tool_turn_runs_bash(
    agentloom_url: str,
    recorder: Recorder,
    backend: FakeBackend,
    scripted: ScriptedModel,
    tmp_path: Path,
) -> None:
    def respond(request: ChatRequest) -> Turn:
        offered = {tool.name for tool in request.tools}
        if "Bash" not in offered:
            return "ok"  # Claude Code's side requests (a title, a summary)
        if MARKER in _said(request):
            return f"The command printed {MARKER}."
        return [tool_call("Bash", {"command": f"echo {MARKER}", "description": "Print a marker"})]

    scripted.respond_with(respond)

    run = claude_code.run(
        "Run the marker command.",
        base_url=agentloom_url,
        model=backend.model,
        scratch=tmp_path,
        extra=("--allowedTools", "Bash(echo:*)"),
    )

    assert run.returncode == 0, run.describe()
    assert run.result.get("result") == f"The command printed {MARKER}.", run.describe()
    told = [
        r
        for r in scripted.requests
        if MARKER in _said(r) and any(m.role == "tool" for m in r.messages)
    ]
    assert told, "the command's output came back to the model as a tool result"
    assert not recorder.failures(), [(e.path, e.status) for e in recorder.failures()]
