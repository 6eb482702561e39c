"""The tool executor: concurrency, call order, and every failure turned into an outcome."""

from __future__ import annotations

import asyncio

import pytest

from agentloom.agents.base import AgentContext
from agentloom.agents.executor import ToolExecutor
from agentloom.agents.loop_guard import LoopGuard
from agentloom.agents.tools.base import Tool, ToolError, function_tool
from agentloom.json_types import JSONObject
from agentloom.llm.types import MessageToolCall


@function_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@function_tool
def fail_politely(reason: str) -> str:
    """Always fails with a message for the model."""
    raise ToolError(f"cannot do that: {reason}")


@function_tool
def crash() -> str:
    """Has a bug."""
    raise KeyError("missing")


class Closing(Tool):
    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.description, self.parameters = name, "", {"type": "object"}
        self.log = log

    async def call(self, arguments: JSONObject, context: AgentContext) -> str:
        return "ok"

    async def aclose(self) -> None:
        self.log.append(self.name)


def call(name: str, arguments: str = "{}", call_id: str | None = None) -> MessageToolCall:
    return MessageToolCall(call_id or f"id_{name}", name, arguments)


async def test_results_come_back_in_call_order_and_calls_run_concurrently() -> None:
    first_started, second_started = asyncio.Event(), asyncio.Event()

    @function_tool
    async def first() -> str:
        """Needs second to have started."""
        first_started.set()
        await second_started.wait()
        await asyncio.sleep(0)  # finishes after second
        await asyncio.sleep(0)
        return "first"

    @function_tool
    async def second() -> str:
        """Needs first to have started."""
        second_started.set()
        await first_started.wait()
        return "second"

    executor = ToolExecutor([first, second])
    async with asyncio.timeout(5):  # run one after the other, they would wait for ever
        outcomes = await executor.run([call("first"), call("second")], AgentContext())

    assert [o.output for o in outcomes] == ["first", "second"]
    assert [o.call_id for o in outcomes] == ["id_first", "id_second"]
    assert not any(o.is_error for o in outcomes)


async def test_every_kind_of_failure_becomes_an_error_outcome() -> None:
    executor = ToolExecutor([add, fail_politely, crash])
    calls = [
        call("add", '{"a": 2, "b": 3}'),
        call("nope"),
        call("add", '{"a": 2,'),
        call("add", "[1, 2]"),
        call("add", '{"a": "x", "b": 1}'),
        call("fail_politely", '{"reason": "no"}'),
        call("crash"),
    ]

    outcomes = await executor.run(calls, AgentContext())

    assert outcomes[0].output == "5"
    assert not outcomes[0].is_error
    assert all(o.is_error for o in outcomes[1:])
    assert "no tool named 'nope'" in outcomes[1].output
    assert "add, crash, fail_politely" in outcomes[1].output
    assert "not valid JSON" in outcomes[2].output
    assert "must be a JSON object" in outcomes[3].output
    assert "invalid arguments: a:" in outcomes[4].output
    assert outcomes[5].output == "error: cannot do that: no"
    assert "crash failed: KeyError" in outcomes[6].output


async def test_a_guard_blocked_call_is_an_error_outcome_and_trips_the_executor() -> None:
    executor = ToolExecutor([add], LoopGuard(max_repeats=1))
    same = call("add", '{"a": 1, "b": 1}')

    outcomes = await executor.run([same, same], AgentContext())

    assert not outcomes[0].is_error
    assert outcomes[1].is_error
    assert outcomes[1].output.startswith("blocked:")
    assert executor.tripped
    executor.reset()
    assert not executor.tripped


async def test_cancellation_is_not_swallowed() -> None:
    @function_tool
    async def hang() -> str:
        """Never returns."""
        await asyncio.Event().wait()
        return "never"

    executor = ToolExecutor([hang])
    task = asyncio.create_task(executor.run([call("hang")], AgentContext()))
    await asyncio.sleep(0)
    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task


def test_duplicate_names_are_refused_and_specs_follow_the_tools() -> None:
    with pytest.raises(ValueError, match="'add'"):
        ToolExecutor([add, add])

    executor = ToolExecutor([add, crash])
    assert [spec.name for spec in executor.specs] == ["add", "crash"]
    assert set(executor.tools) == {"add", "crash"}
    assert executor.specs[0].parameters["required"] == ["a", "b"]


async def test_aclose_closes_every_tool() -> None:
    log: list[str] = []
    executor = ToolExecutor([Closing("one", log), Closing("two", log)])

    await executor.aclose()

    assert log == ["one", "two"]
