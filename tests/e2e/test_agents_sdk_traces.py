"""The Agents SDK's own trace exporter pointed at agentloom: its traces and spans land in
``POST /v1/traces/ingest`` and are read back from ``/v1/traces``, the response's among them."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx2
import openai
import pytest
from agents import (
    Agent,
    OpenAIResponsesModel,
    Runner,
    function_tool,
    set_trace_processors,
    set_tracing_disabled,
)
from agents.tracing.processors import BackendSpanExporter, BatchTraceProcessor

from agentloom.inference.scripted import ScriptedModel, text, tool_call
from agentloom.testing.backend import FakeBackend


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}"


@pytest.fixture
def processor(live_url: str) -> Iterator[BatchTraceProcessor]:
    """The SDK's batch processor and exporter, as users set them up, sending to agentloom."""
    exporter = BackendSpanExporter(api_key="unused", endpoint=f"{live_url}/traces/ingest")
    processor = BatchTraceProcessor(exporter)
    set_tracing_disabled(False)
    set_trace_processors([processor])
    yield processor
    set_trace_processors([])
    set_tracing_disabled(True)
    processor.shutdown()
    exporter.close()


async def _get(live_url: str, path: str, **params: str) -> Any:
    async with httpx2.AsyncClient(base_url=live_url, timeout=10.0) as http:
        reply = await http.get(path, params=params)
    assert reply.status_code == 200, reply.text
    return reply.json()


async def test_exported_traces_are_kept_and_found_by_response(
    live_url: str,
    live_client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    processor: BatchTraceProcessor,
) -> None:
    scripted.add_turn(tool_call("get_weather", {"city": "Paris"}, "call_w"))
    scripted.add_turn(text("Sunny."))
    agent = Agent(
        name="weather",
        model=OpenAIResponsesModel(model=backend.model, openai_client=live_client),
        tools=[get_weather],
    )

    result = await Runner.run(agent, "Weather in Paris?")
    await asyncio.to_thread(processor.force_flush)  # the exporter posts synchronously

    first, second = (raw.response_id for raw in result.raw_responses)
    listed = await _get(live_url, "/traces")
    (trace,) = listed["data"]
    assert trace["object"] == "trace"
    assert trace["workflow_name"] == "Agent workflow"
    assert "spans" not in trace
    by_response = await _get(live_url, "/traces", response_id=str(second))
    assert [t["id"] for t in by_response["data"]] == [trace["id"]]
    assert (await _get(live_url, "/traces", response_id="resp_other"))["data"] == []
    read = await _get(live_url, f"/traces/{trace['id']}")
    kinds = [span["span_data"]["type"] for span in read["spans"]]
    assert {"agent", "function", "response"} <= set(kinds)
    assert kinds.count("response") == 2
    responses = [
        s["span_data"]["response_id"] for s in read["spans"] if s["span_data"]["type"] == "response"
    ]
    assert sorted(responses) == sorted([first, second])
    (agent_span,) = [s for s in read["spans"] if s["span_data"]["type"] == "agent"]
    ids = {s["id"] for s in read["spans"]}
    assert all(s["parent_id"] is None or s["parent_id"] in ids for s in read["spans"])
    assert agent_span["span_data"]["name"] == "weather"
    assert all(s["trace_id"] == trace["id"] and s["ended_at"] for s in read["spans"])


async def test_an_unknown_trace_is_a_404(live_url: str) -> None:
    async with httpx2.AsyncClient(base_url=live_url, timeout=10.0) as http:
        reply = await http.get("/traces/trace_none")

    assert reply.status_code == 404
    assert reply.json()["error"]["param"] == "trace_id"
