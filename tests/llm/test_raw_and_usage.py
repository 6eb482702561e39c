"""The provider's own objects on the answer (``raw_response``, a tool call's ``origin`` and
``raw``), and the marked token estimate when a server reports no usage."""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2
import pytest
from openai.types.responses import Response, ResponseFunctionToolCall

from agentloom.inference.base import ChatRequest, Chunk, Finish, TextDelta, ToolCallDelta, Usage
from agentloom.inference.scripted import ScriptedModel, tool_call, usage
from agentloom.llm import LLM, FunctionTool, Message
from agentloom.testing.backend import FakeBackend
from tests.llm.conftest import MakeLLM

# The seed's sample Response (001, mock_responses_api_response), as its JSON.
SEED_RESPONSE: dict[str, Any] = {
    "id": "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
    "object": "response",
    "created_at": 1741476542,
    "status": "completed",
    "error": None,
    "incomplete_details": None,
    "instructions": None,
    "max_output_tokens": None,
    "model": "gpt-4.1-2025-04-14",
    "output": [
        {
            "type": "message",
            "id": "msg_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b",
            "status": "completed",
            "role": "assistant",
            "content": [
                {
                    "type": "output_text",
                    "text": "In a peaceful grove beneath a silver moon, a unicorn named Lumina "
                    "discovered a hidden pool that reflected the stars.",
                    "annotations": [],
                }
            ],
        }
    ],
    "parallel_tool_calls": True,
    "previous_response_id": None,
    "reasoning": {"effort": None, "summary": None},
    "store": True,
    "temperature": 1.0,
    "text": {"format": {"type": "text"}},
    "tool_choice": "auto",
    "tools": [],
    "top_p": 1.0,
    "truncation": "disabled",
    "usage": {
        "input_tokens": 36,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 87,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 123,
    },
    "user": None,
    "metadata": {},
}

Send = Callable[[dict[str, Any]], Any]


def responses_server(response: dict[str, Any]) -> Callable[..., Any]:
    """A Responses server (ASGI) answering every request with ``response``, streamed as one
    ``response.completed`` event."""

    async def app(scope: dict[str, Any], receive: Callable[[], Any], send: Send) -> None:
        while (await receive()).get("more_body", False):
            pass
        event = {"type": "response.completed", "sequence_number": 0, "response": response}
        body = f"event: response.completed\ndata: {json.dumps(event)}\n\n".encode()
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


@pytest.fixture
def serving() -> Callable[[dict[str, Any]], LLM]:
    """``serving(response)``: an LLM on the Responses path whose server answers ``response``."""

    def make(response: dict[str, Any]) -> LLM:
        transport = httpx2.ASGITransport(app=responses_server(response))
        http = httpx2.AsyncClient(transport=transport, base_url="http://responses.test/v1")
        return LLM("gpt-4.1", base_url="http://responses.test/v1", http_client=http)

    return make


async def test_the_seeds_response_is_read_and_kept_raw(
    serving: Callable[[dict[str, Any]], LLM],
) -> None:
    async with serving(SEED_RESPONSE) as llm:
        reply = await llm.aresponses([Message.user("Tell me a story.")])

    assert reply.text.startswith("In a peaceful grove")
    assert (reply.response_id, reply.model) == (SEED_RESPONSE["id"], "gpt-4.1-2025-04-14")
    assert (reply.metrics.input_tokens, reply.metrics.output_tokens) == (36, 87)
    assert reply.metrics.total_tokens == 123
    assert not reply.metrics.tokens_estimated
    assert isinstance(reply.raw_response, Response)
    assert reply.raw_response.to_dict(mode="json")["usage"] == SEED_RESPONSE["usage"]


async def test_a_response_without_usage_is_estimated_and_says_so(
    serving: Callable[[dict[str, Any]], LLM],
) -> None:
    response = copy.deepcopy(SEED_RESPONSE)
    response["usage"] = None
    said = response["output"][0]["content"][0]["text"]

    async with serving(response) as llm:
        reply = await llm.aresponses([Message.user("Tell me a story.")])

    assert reply.metrics.tokens_estimated
    assert reply.metrics.input_tokens > 0
    assert reply.metrics.output_tokens == -(-len(said) // 4)


async def test_a_responses_tool_call_keeps_its_origin_and_raw_item(
    server_llm: MakeLLM, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("lookup", {"word": "loom"}, "c1"))

    lookup = FunctionTool("lookup", "", {"type": "object", "properties": {}})
    reply = await server_llm().aresponses([Message.user("Define loom.")], [lookup])

    (call,) = reply.tool_calls
    assert call.origin == "responses"
    assert isinstance(call.raw, ResponseFunctionToolCall)
    assert (call.raw.call_id, call.raw.name) == ("c1", "lookup")
    assert isinstance(reply.raw_response, Response)
    assert reply.raw_response.id == reply.response_id


async def test_a_chat_tool_call_keeps_its_origin_and_deltas(
    backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("lookup", {"word": "loom"}, "c1", chunk_size=4), usage(10, 5))

    async with LLM(backend.model, base_url=backend.base_url, max_retries=0) as llm:
        reply = await llm.acompletion([Message.user("Define loom.")])

    (call,) = reply.tool_calls
    assert call.origin == "completion"
    assert isinstance(call.raw, tuple)
    assert all(isinstance(delta, ToolCallDelta) for delta in call.raw)
    assert len(call.raw) > 1  # the arguments came in pieces
    assert "".join(d.arguments for d in call.raw) == call.arguments
    assert isinstance(reply.raw_response, tuple)
    assert reply.raw_response[-1] == Usage(10, 5)
    assert call == type(call)("c1", "lookup", call.arguments)  # origin and raw: not compared
    assert "raw=" not in repr(call)


class _NoUsage:
    """A provider whose backend reports no usage (many self-hosted servers do not)."""

    async def stream(self, request: ChatRequest) -> AsyncIterator[Chunk]:
        yield TextDelta("Twelve characters.")
        yield Finish("stop")

    async def count_tokens(self, request: ChatRequest) -> Any:
        raise NotImplementedError

    async def list_models(self) -> list[Any]:
        return []

    async def aclose(self) -> None:
        return None


async def test_chat_completions_without_usage_is_estimated_and_says_so() -> None:
    async with LLM("local", provider=_NoUsage()) as llm:
        reply = await llm.acompletion([Message.user("How many characters?")])

    assert reply.metrics.tokens_estimated
    assert reply.metrics.output_tokens == 5  # 18 characters, at about four a token
    assert reply.metrics.input_tokens > 0


async def test_reported_usage_is_not_an_estimate(
    backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hi.", usage(7, 2))

    async with LLM(backend.model, base_url=backend.base_url, max_retries=0) as llm:
        reply = await llm.acompletion([Message.user("Hi")])

    assert (reply.metrics.input_tokens, reply.metrics.output_tokens) == (7, 2)
    assert not reply.metrics.tokens_estimated
