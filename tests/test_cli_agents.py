"""The agent commands in-process (click's CliRunner): option parsing, the listings, clean
errors, a chat turn that fails, and what chat draws (tool lines, the spinner on a terminal)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from agentloom.agents.base import (
    AgentFinished,
    AgentResult,
    AgentUsage,
    TextDelta,
    ToolFinished,
    ToolOutcome,
    ToolStarted,
    TurnStarted,
)
from agentloom.agents.builders import AGENTS, TOOLS
from agentloom.cli.activity import Spinner, TurnView, tool_line
from agentloom.cli.ask import result_json
from agentloom.cli.main import main
from agentloom.cli.options import AgentChoice, agent_options
from agentloom.errors import UpstreamError
from agentloom.inference.scripted import ScriptedModel, raise_error
from agentloom.llm.types import MessageToolCall
from agentloom.testing.backend import FakeBackend


@pytest.fixture(autouse=True)
def _no_connection_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AGENTLOOM_BASE_URL", "AGENTLOOM_API_KEY", "AGENTLOOM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@click.command()
@agent_options
def show(choice: AgentChoice) -> None:
    click.echo(repr(choice))


def parsed(*args: str) -> AgentChoice:
    seen: list[AgentChoice] = []

    @click.command()
    @agent_options
    def capture(choice: AgentChoice) -> None:
        seen.append(choice)

    result = CliRunner().invoke(capture, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return seen[0]


# --- options ---------------------------------------------------------------------------------


def test_the_defaults() -> None:
    assert parsed() == AgentChoice(
        agent="orchestrator",
        tools=(),
        model=None,
        base_url=None,
        api_key=None,
        path=None,
        max_turns=10,
        instructions=None,
        config=None,
    )


def test_tools_are_split_on_commas_and_repeatable(tmp_path: Path) -> None:
    choice = parsed(
        "--tools", "calculator, think,", "--tools", "file_read", "--agent", "react",
        "--path", "responses", "--max-turns", "3", "--config", str(tmp_path / "a.toml"),
    )  # fmt: skip

    assert choice.tools == ("calculator", "think", "file_read")
    assert (choice.agent, choice.path, choice.max_turns) == ("react", "responses", 3)
    assert choice.config == tmp_path / "a.toml"


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--path", "grpc"], "'grpc' is not one of 'completions', 'responses'"),
        (["--max-turns", "0"], "0 is not in the range x>=1"),
    ],
)
def test_bad_option_values_are_usage_errors(args: list[str], problem: str) -> None:
    result = CliRunner().invoke(show, args)

    assert result.exit_code == 2
    assert problem in result.output


def test_ask_and_chat_share_the_options() -> None:
    for command in ("ask", "chat"):
        result = CliRunner().invoke(main, [command, "--help"])
        assert result.exit_code == 0
        for option in ("--agent", "--tools", "--model", "--base-url", "--api-key", "--path"):
            assert option in result.output
    assert "--json" in CliRunner().invoke(main, ["ask", "--help"]).output


# --- listings and errors ---------------------------------------------------------------------


def test_agents_and_tools_list_the_registry() -> None:
    agents = CliRunner().invoke(main, ["agents"])
    tools = CliRunner().invoke(main, ["tools"])

    assert agents.exit_code == tools.exit_code == 0
    assert [line.split()[0] for line in agents.output.splitlines()] == list(AGENTS)
    assert [line.split()[0] for line in tools.output.splitlines()] == [*TOOLS, "mcp:<label>"]
    assert AGENTS["orchestrator"].description in agents.output
    assert TOOLS["calculator"].description in tools.output


def test_no_model_and_no_server_to_ask_is_a_one_line_error() -> None:
    result = CliRunner().invoke(main, ["ask", "--base-url", "http://127.0.0.1:9/v1", "hi"])

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith(
        "agentloom: no model given, and the server at http://127.0.0.1:9/v1 cannot be asked"
    )
    assert "Pass --model, set AGENTLOOM_MODEL" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_an_invalid_config_file_is_a_one_line_error(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[[providers]\n")

    result = CliRunner().invoke(main, ["ask", "--config", str(config), "hi"])

    assert result.exit_code == 1
    assert result.stderr.startswith(f"agentloom: config file {config} is not valid TOML")


def test_a_failed_chat_turn_is_reported_and_the_chat_goes_on(
    backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(raise_error(UpstreamError("the GPU caught fire", status=500)))
    scripted.add_turn("Back again.")
    args = ["chat", "--model", backend.model, "--base-url", backend.base_url]

    result = CliRunner().invoke(main, args, input="First?\nSecond?\n")

    assert result.exit_code == 0, result.output
    assert result.stdout == "Back again.\n"
    assert "agentloom: the model's endpoint failed:" in result.stderr
    assert "GPU caught fire" in result.stderr
    # the failed exchange left no trace in the conversation
    assert backend.requests[1]["messages"] == [{"role": "user", "content": "Second?"}]


# --- what chat draws -------------------------------------------------------------------------


def test_result_json_leaves_the_messages_out() -> None:
    result = AgentResult(
        "Stopped after 2 turns without a final answer.",
        (ToolOutcome("c1", "think", "{}", "error: boom", is_error=True),),
        turns=2,
        usage=AgentUsage(10, 5, 2, 1, 2),
        stop_reason="max_turns",
        metadata={"note": 1},
    )

    shown = result_json(result)

    assert json.loads(json.dumps(shown)) == {
        "content": "Stopped after 2 turns without a final answer.",
        "tool_results": [
            {
                "call_id": "c1",
                "name": "think",
                "arguments": "{}",
                "output": "error: boom",
                "is_error": True,
            }
        ],
        "turns": 2,
        "usage": {
            "input_tokens": 10,
            "output_tokens": 5,
            "total_tokens": 15,
            "cached_tokens": 2,
            "reasoning_tokens": 1,
            "model_calls": 2,
        },
        "stop_reason": "max_turns",
        "max_turns_exceeded": True,
        "metadata": {"note": 1},
    }


def test_tool_lines() -> None:
    ok = ToolOutcome("c", "calculator", '{"expression":\n "6*7"}', "42")
    failed = ToolOutcome("c", "file_read", '{"path": "../x"}', "error: outside", is_error=True)
    long = ToolOutcome("c", "think", "{}", "x" * 500)

    assert tool_line(ok) == '⚙ calculator({"expression": "6*7"}) -> 42'
    assert tool_line(failed) == '⚙ file_read({"path": "../x"}) -> error: outside'
    assert tool_line(long).endswith("x…")
    assert len(tool_line(long)) < 150


async def test_the_spinner_draws_only_on_a_terminal() -> None:
    terminal, pipe = Terminal(), io.StringIO()
    on, off = Spinner(terminal, interval=60), Spinner(pipe, interval=60)

    for spinner in (on, off):
        await spinner.start("thinking")
    assert on.spinning
    assert not off.spinning
    assert terminal.getvalue() == "\r⠋ thinking"
    for spinner in (on, off):
        await spinner.stop()

    assert not on.spinning
    assert terminal.getvalue() == "\r⠋ thinking\r\x1b[K"
    assert pipe.getvalue() == ""


async def test_the_turn_view_streams_text_and_tool_lines_between_spinners() -> None:
    out, terminal = io.StringIO(), Terminal()
    spinner = Spinner(terminal, interval=60)
    view = TurnView(out, spinner)
    call = MessageToolCall("c", "calculator", '{"expression": "6*7"}')
    result = AgentResult("It is 42.")

    await view.show(TurnStarted(1))
    assert spinner.spinning
    await view.show(TextDelta("Let me see."))
    assert not spinner.spinning
    await view.show(ToolStarted(call))
    assert terminal.getvalue().endswith("\r⠋ running calculator")
    await view.show(ToolFinished(ToolOutcome("c", "calculator", call.arguments, "42")))
    await view.show(TurnStarted(2))
    await view.show(TextDelta("It is "))
    await view.show(TextDelta("42."))
    assert await view.show(AgentFinished(result)) is result

    assert not spinner.spinning
    assert out.getvalue() == ('Let me see.\n⚙ calculator({"expression": "6*7"}) -> 42\nIt is 42.\n')


async def test_an_answer_that_was_not_streamed_is_printed() -> None:
    out = io.StringIO()
    view = TurnView(out, Spinner(io.StringIO()))

    await view.show(TurnStarted(1))
    await view.show(TextDelta("THOUGHT: done\nFINAL_ANSWER: 42"))
    await view.show(AgentFinished(AgentResult("Stopped after 1 turns without a final answer.")))

    assert out.getvalue() == (
        "THOUGHT: done\nFINAL_ANSWER: 42\nStopped after 1 turns without a final answer.\n"
    )
