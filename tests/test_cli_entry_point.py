"""``agentloom ask`` / ``chat`` through the installed entry point (a real process), against the
fake backend served over a socket (the Chat Completions path)."""

from __future__ import annotations

import json
from typing import Any, cast

from agentloom.inference.scripted import ScriptedModel, text, tool_call
from agentloom.testing.backend import FakeBackend
from tests.cli_support import connect, run_cli


def sent(backend: FakeBackend, index: int) -> list[dict[str, Any]]:
    return cast("list[dict[str, Any]]", backend.requests[index]["messages"])


def test_ask_prints_the_answer_after_a_tool_call(
    backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("calculator", {"expression": "17 * 23"}))
    scripted.add_turn("17 * 23 = 391.")

    done = run_cli("ask", "--tools", "calculator", *connect(backend), "What is 17 * 23?")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "17 * 23 = 391.\n"
    assert done.stderr == ""
    assert sent(backend, 1)[-1]["content"] == "391"


def test_ask_json_reads_the_question_from_stdin(
    backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("calculator", {"expression": "2 ** 10"}, call_id="call_pow"))
    scripted.add_turn("1024.")

    done = run_cli(
        "ask",
        "--json",
        "--tools",
        "calculator,think",
        "--max-turns",
        "3",
        *connect(backend),
        "-",
        stdin="What is 2 ** 10?\n",
    )

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["content"] == "1024."
    assert result["tool_results"] == [
        {
            "call_id": "call_pow",
            "name": "calculator",
            "arguments": '{"expression": "2 ** 10"}',
            "output": "1024",
            "is_error": False,
        }
    ]
    assert result["turns"] == 2
    assert result["stop_reason"] == "final"
    assert result["max_turns_exceeded"] is False
    assert result["usage"]["model_calls"] == 2
    assert result["usage"]["input_tokens"] > 0
    assert result["metadata"] == {}
    assert "messages" not in result
    assert sent(backend, 0)[-1] == {"role": "user", "content": "What is 2 ** 10?\n"}
    offered = [tool["function"]["name"] for tool in backend.requests[0]["tools"]]
    assert offered == ["calculator", "think"]


def test_chat_keeps_the_conversation_until_reset(
    backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(
        text("Let me compute. ", chunk_size=5), tool_call("calculator", {"expression": "6*7"})
    )
    scripted.add_turn("It is 42.")
    scripted.add_turn("You asked about 6*7.")
    scripted.add_turn("I remember nothing.")
    stdin = "What is 6*7?\nWhat did I ask?\n/reset\nWhat did I ask?\n/exit\nnever read\n"

    done = run_cli("chat", "--tools", "calculator", *connect(backend), stdin=stdin)

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "Let me compute. ",
        '⚙ calculator({"expression": "6*7"}) -> 42',
        "It is 42.",
        "You asked about 6*7.",
        "I remember nothing.",
    ]
    assert done.stderr == "(conversation cleared)\n"  # no spinner: stderr is not a terminal
    assert len(backend.requests) == 4
    second_turn = sent(backend, 2)
    assert [m["role"] for m in second_turn] == ["user", "assistant", "tool", "assistant", "user"]
    assert sent(backend, 3) == [{"role": "user", "content": "What did I ask?"}]
