"""The Vercel AI SDK (``ai`` + ``@ai-sdk/openai``) against agentloom over a real socket.

``ai_sdk.mjs`` runs one scenario with ``createOpenAI({ baseURL, apiKey })`` and
``openai.responses(model)`` (or ``openai.chat(model)``: Chat Completions passed through) and
prints what the SDK returned as JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentloom.inference.scripted import ScriptedModel, reasoning, text, tool_call
from agentloom.testing.backend import FakeBackend
from tests.clients import node
from tests.clients.recording import Recorder
from tests.e2e.support import received

SCRIPT = node.CLIENTS_DIR / "ai_sdk.mjs"
GREETING = "Hello from agentloom, streamed in pieces."


@pytest.fixture(autouse=True)
def _installed() -> None:
    """Skip (or fail, in CI) before starting anything when the SDK is not installed."""
    node.node()
    node.package("ai")
    node.package("@ai-sdk/openai")


def ai_sdk(
    scenario: str, url: str, model: str, prompt: str, cwd: Path, api: str = "responses"
) -> dict[str, Any]:
    """Run one scenario of ``ai_sdk.mjs``; the SDK's result, or its error, as JSON."""
    options = {"baseURL": url, "model": model, "scenario": scenario, "prompt": prompt, "api": api}
    result = node.run([node.node(), SCRIPT, json.dumps(options)], env={}, cwd=cwd)
    assert result.stdout, result.stderr
    answer: dict[str, Any] = json.loads(result.stdout.splitlines()[-1])
    assert result.returncode == 0, (answer, result.stderr)
    return answer


def test_generate_text(
    agentloom_url: str, backend: FakeBackend, scripted: ScriptedModel, tmp_path: Path
) -> None:
    scripted.add_turn(GREETING)

    answer = ai_sdk("generate", agentloom_url, backend.model, "Say hello.", tmp_path)

    assert answer["text"] == GREETING
    assert answer["finishReason"] == "stop"
    assert answer["usage"]["outputTokens"] > 0
    assert received(backend)[0]["messages"][-1] == {"role": "user", "content": "Say hello."}


def test_stream_text_arrives_in_pieces(
    agentloom_url: str, backend: FakeBackend, scripted: ScriptedModel, tmp_path: Path
) -> None:
    scripted.add_turn(text(GREETING, chunk_size=6))

    answer = ai_sdk("stream", agentloom_url, backend.model, "Say hello.", tmp_path)

    assert answer["deltas"] == [GREETING[i : i + 6] for i in range(0, len(GREETING), 6)]
    assert answer["text"] == GREETING
    assert answer["finishReason"] == "stop"


def test_tool_loop(
    agentloom_url: str,
    backend: FakeBackend,
    scripted: ScriptedModel,
    recorder: Recorder,
    tmp_path: Path,
) -> None:
    """``tools`` with ``stopWhen: stepCountIs(3)``: the model calls the tool, the SDK runs it
    and sends the result back (referring to the stored reasoning by id), the model answers."""
    scripted.add_turns(
        [reasoning("I need the weather."), tool_call("get_weather", {"city": "Paris"})],
        "It is sunny in Paris.",
    )

    answer = ai_sdk("tools", agentloom_url, backend.model, "Weather in Paris?", tmp_path)

    assert answer["calls"] == [{"city": "Paris"}]
    assert answer["text"] == "It is sunny in Paris."
    first, second = answer["steps"]
    assert first["toolCalls"] == [{"toolName": "get_weather", "input": {"city": "Paris"}}]
    assert first["toolResults"] == [{"toolName": "get_weather", "output": "Sunny in Paris, 21C"}]
    assert second["finishReason"] == "stop"
    # the second request named the reasoning item by reference; agentloom resolved it
    sent = recorder.posts()[1].json()["input"]
    assert [i.get("type") for i in sent[1:]] == [
        "item_reference",
        "function_call",
        "function_call_output",
    ]
    assistant, tool_result = received(backend)[1]["messages"][-2:]
    assert assistant["reasoning_content"] == "I need the weather."
    assert tool_result == {
        "role": "tool",
        "content": "Sunny in Paris, 21C",
        "tool_call_id": "call_scripted_1",
    }


# --- openai.chat(model): Chat Completions passed through ---------------------------------------


def test_chat_generate_and_stream(
    agentloom_url: str,
    backend: FakeBackend,
    scripted: ScriptedModel,
    recorder: Recorder,
    tmp_path: Path,
) -> None:
    scripted.add_turn(GREETING)
    scripted.add_turn(text(GREETING, chunk_size=6))

    whole = ai_sdk("generate", agentloom_url, backend.model, "Say hello.", tmp_path, api="chat")
    streamed = ai_sdk("stream", agentloom_url, backend.model, "Say hello.", tmp_path, api="chat")

    assert (whole["text"], whole["finishReason"]) == (GREETING, "stop")
    assert whole["usage"]["outputTokens"] > 0
    assert streamed["deltas"] == [GREETING[i : i + 6] for i in range(0, len(GREETING), 6)]
    assert streamed["text"] == GREETING
    assert len(recorder.posts("/chat/completions")) == 2


def test_chat_tool_loop(
    agentloom_url: str, backend: FakeBackend, scripted: ScriptedModel, tmp_path: Path
) -> None:
    scripted.add_turns([tool_call("get_weather", {"city": "Paris"})], "It is sunny in Paris.")

    answer = ai_sdk("tools", agentloom_url, backend.model, "Weather?", tmp_path, api="chat")

    assert answer["calls"] == [{"city": "Paris"}]
    assert answer["text"] == "It is sunny in Paris."
    tool_result = received(backend)[1]["messages"][-1]
    assert (tool_result["role"], tool_result["tool_call_id"]) == ("tool", "call_scripted_1")
