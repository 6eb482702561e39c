"""The claude_code agent: without its runtime it is a clear invalid request; with Node and a
stand-in for the Claude Agent SDK (tests/agents/fake_runtimes, no network) the shipped runner
runs, and what the SDK streams comes back as agent events and a result."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentloom.agents import AgentContext, AgentFinished, AgentOptions, TextDelta
from agentloom.agents.base import AgentEvent, ToolFinished, ToolStarted, TurnStarted
from agentloom.agents.builders import build_agent
from agentloom.agents.claude_code import SDK_PACKAGE, ClaudeCodeAgent, ClaudeCodeRuntime
from agentloom.agents.tools.calculator import CalculatorTool
from agentloom.errors import InvalidRequestError, UpstreamError, UpstreamTimeoutError
from agentloom.inference.scripted import ScriptedModel
from agentloom.llm import LLM
from tests.agents.code_agents import children

FAKE_SDK = Path(__file__).parent / "fake_runtimes" / "claude-agent-sdk"
KEY = "sk-ant-test-key"

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A data directory whose claude_code prefix holds the stand-in SDK."""
    shutil.copytree(FAKE_SDK, tmp_path / "claude_code" / "node_modules" / SDK_PACKAGE)
    return tmp_path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def _llm() -> LLM:
    return LLM("claude-test", provider=ScriptedModel())


def _agent(data_dir: Path, monkeypatch: pytest.MonkeyPatch, **options: object) -> ClaudeCodeAgent:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/anthropic")
    agent = build_agent("claude_code", _llm(), (), AgentOptions(data_dir=data_dir, **options))  # type: ignore[arg-type]
    assert isinstance(agent, ClaudeCodeAgent)
    return agent


def test_without_the_sdk_making_the_agent_names_the_install(tmp_path: Path) -> None:
    with pytest.raises(InvalidRequestError, match="needs the Claude Agent SDK") as caught:
        build_agent("claude_code", _llm(), (), AgentOptions(data_dir=tmp_path))
    prefix = tmp_path / "claude_code"
    install = f"run `npm install --prefix {prefix} {SDK_PACKAGE}`"
    assert caught.value.message.endswith(f"not found in {prefix}: {install}")


def test_without_node_making_the_agent_names_node(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(data_dir))  # no node here
    with pytest.raises(InvalidRequestError, match=r"needs Node.js \(18 or later\) and the") as e:
        ClaudeCodeRuntime.find(data_dir / "claude_code")
    assert e.value.message.endswith(
        f"install Node.js, then run `npm install --prefix {data_dir}/claude_code {SDK_PACKAGE}`"
    )


def test_agentloom_tools_are_refused(data_dir: Path) -> None:
    with pytest.raises(InvalidRequestError, match="Claude Code's own tools"):
        build_agent("claude_code", _llm(), [CalculatorTool()], AgentOptions(data_dir=data_dir))


@needs_node
async def test_the_sdks_messages_become_events_and_a_result(
    data_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = _agent(data_dir, monkeypatch, instructions="Be terse.", max_turns=7)
    context = AgentContext(workspace=workspace)
    events: list[AgentEvent] = [e async for e in agent.stream("Summarise a.txt", context)]
    kinds = [type(event) for event in events]
    assert kinds == [
        TurnStarted,
        TextDelta,
        ToolStarted,
        ToolFinished,
        TurnStarted,
        TextDelta,
        AgentFinished,
    ]
    started, finished = events[2], events[3]
    assert isinstance(started, ToolStarted)
    assert (started.call.name, json.loads(started.call.arguments)) == (
        "Read",
        {"file_path": "a.txt"},
    )
    assert isinstance(finished, ToolFinished)
    assert (finished.outcome.output, finished.outcome.is_error) == ("file contents", False)
    last = events[-1]
    assert isinstance(last, AgentFinished)
    result = last.result
    assert (result.turns, result.stop_reason) == (2, "final")
    assert (result.usage.input_tokens, result.usage.output_tokens) == (120, 30)
    assert (result.usage.cached_tokens, result.usage.model_calls) == (100, 2)
    assert result.metadata == {
        "runtime": "claude_code",
        "subtype": "success",
        "session_id": "fake-session",
        "cost_usd": 0.0123,
    }
    seen = json.loads(result.content)
    assert seen["prompt"] == "Summarise a.txt"
    assert (seen["cwd"], seen["model"], seen["maxTurns"]) == (str(workspace), "claude-test", 7)
    assert seen["systemPrompt"] == {
        "type": "preset",
        "preset": "claude_code",
        "append": "Be terse.",
    }
    assert seen["permissionMode"] == "default"
    assert seen["optionsKey"] == KEY  # the key reaches Claude Code's environment, from stdin ...
    assert seen["optionsBaseUrl"] == "http://127.0.0.1:9/anthropic"
    assert seen["processKey"] is None  # ... never the runner's own environment
    assert set(seen["processEnv"]) <= {"HOME", "LANG", "PATH"}
    assert not children()


@needs_node
async def test_a_run_that_hits_max_turns_says_so(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = await _agent(data_dir, monkeypatch).run("a task too long")
    assert result.stop_reason == "max_turns"
    assert json.loads(result.content)["prompt"] == "a task too long"  # the last text


@needs_node
@pytest.mark.parametrize(
    ("prompt", "message"),
    [
        ("throw", "Claude Code failed: no credentials for Claude Code"),
        ("silent", r"ended without a result \(exit status 0\)"),
    ],
)
async def test_failures_are_upstream_errors(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, prompt: str, message: str
) -> None:
    with pytest.raises(UpstreamError, match=message):
        await _agent(data_dir, monkeypatch).run(prompt)
    assert not children()


@needs_node
async def test_a_run_past_its_timeout_is_killed(data_dir: Path) -> None:
    runtime = ClaudeCodeRuntime.find(data_dir / "claude_code")
    agent = ClaudeCodeAgent(_llm(), runtime, timeout=1.0)
    with pytest.raises(UpstreamTimeoutError, match="did not finish within 1 s"):
        await agent.run("hang")
    assert not children()
