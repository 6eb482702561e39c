"""The orchestrator's native function-calling loop, step by step with a scripted model."""

from __future__ import annotations

import asyncio

import pytest

from agentloom.agents import (
    AgentContext,
    AgentEvent,
    AgentFinished,
    LoopGuard,
    OrchestratorAgent,
    TextDelta,
    ToolError,
    ToolFinished,
    ToolStarted,
    TurnStarted,
    function_tool,
)
from agentloom.inference.scripted import ScriptedModel, Turn, text, tool_call
from agentloom.llm import LLM, ConversationState, LLMStateError


@function_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@function_tool
def refuse(reason: str) -> str:
    """Always refuses."""
    raise ToolError(f"refused: {reason}")


@function_tool
def broken() -> str:
    """Has a bug."""
    raise ZeroDivisionError("division by zero")


def scripted(*turns: Turn) -> tuple[LLM, ScriptedModel]:
    model = ScriptedModel(list(turns))
    return LLM("m", provider=model), model


async def test_parallel_calls_run_concurrently_and_results_keep_call_order() -> None:
    a_started, b_started = asyncio.Event(), asyncio.Event()

    @function_tool
    async def slow_a() -> str:
        """Waits for slow_b."""
        a_started.set()
        await b_started.wait()
        return "A"

    @function_tool
    async def slow_b() -> str:
        """Waits for slow_a."""
        b_started.set()
        await a_started.wait()
        return "B"

    llm, model = scripted(
        [tool_call("slow_a", {}, "call_a"), tool_call("slow_b", {}, "call_b")], "A then B"
    )
    agent = OrchestratorAgent(llm, [slow_a, slow_b])

    async with asyncio.timeout(5):  # sequential calls would wait on each other for ever
        result = await agent.run("go")

    assert result.content == "A then B"
    assert result.stop_reason == "final"
    assert [(o.call_id, o.output) for o in result.tool_results] == [
        ("call_a", "A"),
        ("call_b", "B"),
    ]
    sent = model.requests[1].messages
    assert [m.role for m in sent] == ["user", "assistant", "tool", "tool"]
    assert [c.id for c in sent[1].tool_calls] == ["call_a", "call_b"]
    assert [(m.tool_call_id, m.content) for m in sent[2:]] == [("call_a", "A"), ("call_b", "B")]
    assert [t.name for t in model.requests[0].tools] == ["slow_a", "slow_b"]


async def test_tool_errors_are_fed_back_and_the_run_continues() -> None:
    llm, model = scripted(
        [
            tool_call("refuse", {"reason": "policy"}, "c1"),
            tool_call("broken", {}, "c2"),
            tool_call("missing", {}, "c3"),
            tool_call("add", '{"a": 1,', "c4"),
        ],
        [tool_call("add", {"a": 1, "b": 2}, "c5")],
        "The sum is 3.",
    )
    agent = OrchestratorAgent(llm, [add, refuse, broken])

    result = await agent.run("add one and two")

    assert result.content == "The sum is 3."
    assert result.turns == 3
    assert [o.is_error for o in result.tool_results] == [True, True, True, True, False]
    fed_back = [m.content or "" for m in model.requests[1].messages if m.role == "tool"]
    assert fed_back[0] == "error: refused: policy"
    assert "broken failed: ZeroDivisionError" in fed_back[1]
    assert "no tool named 'missing'" in fed_back[2]
    assert "not valid JSON" in fed_back[3]


async def test_identical_repeats_are_blocked_then_stop_the_run() -> None:
    same = {"a": 1, "b": 1}
    llm, model = scripted(
        [tool_call("add", same)], [tool_call("add", same)], [tool_call("add", same)], "unused"
    )
    agent = OrchestratorAgent(llm, [add], guard=LoopGuard(max_repeats=1))

    result = await agent.run("loop")

    assert result.stop_reason == "loop_guard"
    assert result.turns == 3
    assert [o.is_error for o in result.tool_results] == [False, True, True]
    told = model.requests[2].messages[-1].content or ""
    assert told.startswith("blocked: add was already called 1 times")
    assert "loop guard" in result.content
    assert model.remaining == 1


async def test_ping_pong_is_blocked() -> None:
    ping, pong = tool_call("add", {"a": 1, "b": 0}), tool_call("add", {"a": 0, "b": 1})
    llm, _ = scripted([ping], [pong], [ping], [pong], [ping], [pong], [ping], "unused")
    agent = OrchestratorAgent(llm, [add], guard=LoopGuard(max_repeats=5, ping_pong_cycles=3))

    result = await agent.run("alternate")

    assert result.stop_reason == "loop_guard"
    assert [o.is_error for o in result.tool_results] == [False] * 5 + [True, True]
    assert "alternating" in result.tool_results[5].output


async def test_a_model_that_changes_course_after_a_block_carries_on() -> None:
    same = {"a": 2, "b": 2}
    llm, _ = scripted(
        [tool_call("add", same)],
        [tool_call("add", same)],
        [tool_call("add", {"a": 3, "b": 3})],
        "6",
    )
    agent = OrchestratorAgent(llm, [add], guard=LoopGuard(max_repeats=1))

    result = await agent.run("go")

    assert result.stop_reason == "final"
    assert result.content == "6"


async def test_max_turns_stops_the_run_and_flags_it() -> None:
    llm, _ = scripted(
        ["Let me add.", tool_call("add", {"a": 1, "b": 1})],
        [tool_call("add", {"a": 2, "b": 2})],
        "never reached",
    )
    agent = OrchestratorAgent(llm, [add], max_turns=2)

    result = await agent.run("go")

    assert result.max_turns_exceeded
    assert result.turns == 2
    assert result.content == "Let me add."
    assert len(result.tool_results) == 2


async def test_max_turns_without_any_text_gives_a_clear_note() -> None:
    llm, _ = scripted([tool_call("add", {"a": 1, "b": 1})])
    result = await OrchestratorAgent(llm, [add], max_turns=1).run("go")

    assert result.stop_reason == "max_turns"
    assert result.content == "Stopped after 1 turns without a final answer."


async def test_the_stream_yields_each_step_in_order() -> None:
    llm, _ = scripted(
        [
            text("Adding", chunk_size=3),
            tool_call("add", {"a": 1, "b": 2}, "c1"),
            tool_call("add", {"a": 3, "b": 4}, "c2"),
        ],
        "3 and 7",
    )
    events: list[AgentEvent] = [e async for e in OrchestratorAgent(llm, [add]).stream("go")]

    kinds = [e.type for e in events]
    assert kinds == [
        "turn_started", "text_delta", "text_delta", "tool_started", "tool_started",
        "tool_finished", "tool_finished", "turn_started", "text_delta", "agent_finished",
    ]  # fmt: skip
    assert [e.turn for e in events if isinstance(e, TurnStarted)] == [1, 2]
    assert "".join(e.text for e in events[:3] if isinstance(e, TextDelta)) == "Adding"
    assert [e.call.call_id for e in events if isinstance(e, ToolStarted)] == ["c1", "c2"]
    assert [e.outcome.output for e in events if isinstance(e, ToolFinished)] == ["3", "7"]
    final = events[-1]
    assert isinstance(final, AgentFinished)
    assert final.result.usage.model_calls == 2
    assert final.result.usage.input_tokens > 0
    assert [m.role for m in final.result.messages] == [
        "user", "assistant", "tool", "tool", "assistant",
    ]  # fmt: skip


async def test_instructions_become_the_system_message() -> None:
    llm, model = scripted("hi")
    await OrchestratorAgent(llm, instructions="Be brief.").run("hello")

    assert [(m.role, m.content) for m in model.requests[0].messages] == [
        ("system", "Be brief."),
        ("user", "hello"),
    ]
    assert model.requests[0].tools == ()


async def test_the_context_state_reaches_the_model_call() -> None:
    llm, _ = scripted("hi")
    context = AgentContext(state=ConversationState(previous_response_id="resp_1"))

    with pytest.raises(LLMStateError, match="resp_1"):
        await OrchestratorAgent(llm).run("hello", context)


async def test_a_new_run_starts_with_a_fresh_guard() -> None:
    same = {"a": 1, "b": 1}
    llm, _ = scripted([tool_call("add", same)], "2", [tool_call("add", same)], "2 again")
    agent = OrchestratorAgent(llm, [add], guard=LoopGuard(max_repeats=1))

    first = await agent.run("go")
    second = await agent.run("go")

    assert (first.content, second.content) == ("2", "2 again")
    assert not any(o.is_error for o in second.tool_results)


async def test_a_context_bus_hears_each_tool_result_and_the_result() -> None:
    from agentloom.bus import EventBus

    bus = EventBus()
    heard: list[object] = []
    bus.subscribe(heard.append, object)
    model = ScriptedModel([[tool_call("add", {"a": 2, "b": 3})], "5"])
    agent = OrchestratorAgent(LLM("m", provider=model), [add])

    result = await agent.run("2 + 3?", AgentContext(bus=bus))

    assert [type(event) for event in heard] == [ToolFinished, AgentFinished]
    finished = heard[0]
    assert isinstance(finished, ToolFinished)
    assert finished.outcome.output == "5"
    assert heard[1] == AgentFinished(result)
