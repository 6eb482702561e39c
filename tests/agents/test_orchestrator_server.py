"""End to end: the orchestrator on the Responses path against the agentloom server (in-process),
whose model is the scripted one behind the fake HTTP backend."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import pytest

from agentloom.agents import AgentContext, OrchestratorAgent
from agentloom.agents.tools.calculator import CalculatorTool
from agentloom.agents.tools.think import ThinkTool
from agentloom.bus import EventBus
from agentloom.inference.scripted import ScriptedModel, tool_call
from agentloom.llm import LLM, ConversationState, LLMCall, StateMode
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import BASE_URL


@pytest.fixture
async def server_llm(http: httpx2.AsyncClient, backend: FakeBackend) -> AsyncIterator[LLM]:
    llm = LLM(
        backend.model,
        base_url=BASE_URL,
        http_client=http,
        path="responses",
        max_retries=0,
        bus=EventBus(),
    )
    yield llm
    await llm.aclose()


@pytest.mark.parametrize("state_mode", ["stateless", "stateful"])
async def test_the_orchestrator_runs_tools_through_the_server(
    server_llm: LLM, scripted: ScriptedModel, state_mode: StateMode
) -> None:
    scripted.add_turn(
        tool_call("calculator", {"expression": "6 * 7"}, "call_calc"),
        tool_call("think", {"thought": "double-check"}, "call_think"),
    )
    scripted.add_turn("6 times 7 is 42.")
    server_llm.state_mode = state_mode
    paths: list[str] = []
    server_llm.bus.subscribe(lambda call: paths.append(call.path), LLMCall)
    context = AgentContext(state=ConversationState())
    agent = OrchestratorAgent(server_llm, [CalculatorTool(), ThinkTool()])

    result = await agent.run("What is 6 times 7?", context)

    assert result.content == "6 times 7 is 42."
    assert result.stop_reason == "final"
    assert [(o.call_id, o.output) for o in result.tool_results] == [
        ("call_calc", "42"),
        ("call_think", "ok"),
    ]
    assert result.usage.model_calls == 2
    assert paths == ["responses", "responses"]
    second = scripted.requests[1]
    outputs = [(m.tool_call_id, m.content) for m in second.messages if m.role == "tool"]
    assert outputs == [("call_calc", "42"), ("call_think", "ok")]
    assert [t.name for t in second.tools] == ["calculator", "think"]
    if state_mode == "stateful":
        assert context.state is not None
        assert context.state.previous_response_id is not None
