"""Both paths give agent code the same answer, and the Responses path over a real socket."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator

import pytest

from agentloom.config import Settings
from agentloom.errors import UpstreamError, UpstreamTimeoutError
from agentloom.inference.scripted import ScriptedModel, delay, reasoning, tool_call, usage
from agentloom.llm import (
    LLM,
    FunctionTool,
    LLMCompleted,
    LLMResponse,
    Message,
    Path,
    TextDeltaEvent,
)
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend
from agentloom.testing.serving import serve_async
from tests.llm.conftest import MakeLLM

LOOKUP = FunctionTool(
    "lookup", "Look a word up.", {"type": "object", "properties": {"word": {"type": "string"}}}
)


async def agent_step(llm: LLM) -> LLMResponse:
    """What agent code does, whatever path the model uses."""
    return await llm.chat([Message.system("Be brief."), Message.user("Define loom.")], [LOOKUP])


async def test_both_paths_give_the_same_answer(
    backend: FakeBackend, scripted: ScriptedModel, server_llm: MakeLLM
) -> None:
    turn = [reasoning("Look it up."), "Let me check.", tool_call("lookup", {"word": "loom"}, "c1")]
    scripted.add_turns([*turn, usage(50, 9)], [*turn, usage(50, 9)])
    routed = server_llm(path=None, capabilities={"fake-*": "responses"})  # the table routes it

    async with LLM(backend.model, base_url=backend.base_url, max_retries=0) as chat_llm:
        via_chat = await agent_step(chat_llm)
    via_responses = await agent_step(routed)

    assert (chat_llm.path, routed.path) == ("completions", "responses")
    assert via_chat.message.content == via_responses.message.content == "Let me check."
    assert via_chat.tool_calls == via_responses.tool_calls
    assert via_chat.reasoning == via_responses.reasoning == "Look it up."
    assert via_chat.finish_reason == via_responses.finish_reason == "tool_calls"
    chat_metrics, responses_metrics = via_chat.metrics, via_responses.metrics
    assert (chat_metrics.input_tokens, chat_metrics.output_tokens) == (50, 9)
    assert (responses_metrics.input_tokens, responses_metrics.output_tokens) == (50, 9)
    assert (chat_metrics.path, responses_metrics.path) == ("completions", "responses")


@pytest.fixture
async def agentloom_url(settings: Settings) -> AsyncIterator[str]:
    async with serve_async(create_app(settings)) as url:
        yield url


async def test_responses_over_a_real_socket(
    agentloom_url: str, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns([tool_call("lookup", {"word": "loom"}, "c1")], "A weaving frame.")
    history = [Message.user("Define loom.")]

    async with LLM(backend.model, base_url=agentloom_url, path="responses", max_retries=0) as llm:
        first = await llm.chat(history, [LOOKUP])
        history += [first.message, Message.tool("c1", "a frame for weaving")]
        deltas: list[str] = []
        last = None
        async for event in llm.stream(history, [LOOKUP]):
            if isinstance(event, TextDeltaEvent):
                deltas.append(event.text)
            last = event

    assert [c.call_id for c in first.tool_calls] == ["c1"]
    assert "".join(deltas) == "A weaving frame."
    assert isinstance(last, LLMCompleted)
    assert last.response.metrics.path == "responses"
    assert scripted.requests[-1].messages[-1].tool_call_id == "c1"


async def test_a_silent_server_is_a_timeout(
    agentloom_url: str, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(delay(1.5), "Too late.")

    async with LLM(
        backend.model, base_url=agentloom_url, path="responses", max_retries=0, timeout=0.3
    ) as llm:
        with pytest.raises(UpstreamTimeoutError, match="did not answer in time"):
            await llm.chat([Message.user("Hi")])


@pytest.mark.parametrize("path", ["completions", "responses"])
async def test_an_unreachable_server_is_an_upstream_error(path: Path, unused_url: str) -> None:
    async with LLM("gpt-5", base_url=unused_url, path=path, max_retries=0) as llm:
        with pytest.raises(UpstreamError, match="could not reach"):
            await llm.chat([Message.user("Hi")])


@pytest.fixture
def unused_url() -> str:
    """A local URL nothing listens on (a port just bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
