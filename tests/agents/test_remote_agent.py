"""The server ``Agent`` helper against the agentloom app (in-process, official ``openai``
client), with the scripted model behind it: sessions are server conversations, local function
tools run client-side, declared tools wait for the caller."""

from __future__ import annotations

import json
from typing import Any, cast

import openai
import pytest
from starlette.applications import Starlette

from agentloom.agents.base import ToolOutcome
from agentloom.agents.event_logger import EventLogger
from agentloom.agents.remote import Agent, input_items
from agentloom.agents.tools.base import function_tool
from agentloom.agents.turns import (
    InferenceStarted,
    LocalToolFinished,
    LocalToolStarted,
    ToolOutput,
    TurnCompleted,
    TurnEvent,
    TurnTextDelta,
)
from agentloom.errors import UpstreamError, UpstreamRequestError
from agentloom.inference.scripted import ScriptedModel, raise_error, text, tool_call
from agentloom.llm.types import FunctionTool, Message, MessageToolCall
from agentloom.testing.backend import FakeBackend
from agentloom.testing.serving import serve_async


@function_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


LOOKUP = FunctionTool(
    "lookup",
    "Look a word up in the caller's dictionary.",
    {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]},
)


def sent(backend: FakeBackend, index: int = -1) -> list[dict[str, Any]]:
    return cast("list[dict[str, Any]]", backend.requests[index]["messages"])


async def collect(agent: Agent, messages: Any, session: str) -> list[TurnEvent]:
    return [event async for event in agent.create_turn(messages, session)]


async def items_of(client: openai.AsyncOpenAI, session: str) -> list[str]:
    """(type or role) of each item of the session's conversation."""
    items = [item async for item in client.conversations.items.list(session, order="asc")]
    return [item.role if item.type == "message" else item.type for item in items]


async def test_a_streamed_turn_on_a_new_session(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(text("Hello there.", chunk_size=4))
    agent = Agent(client, model=backend.model, instructions="Be brief.")
    session = await agent.create_session("greeting")

    events = await collect(agent, "Hi!", session)

    assert events[0] == InferenceStarted(1)
    deltas = [e.text for e in events if isinstance(e, TurnTextDelta)]
    assert len(deltas) > 1
    assert "".join(deltas) == "Hello there."
    last = events[-1]
    assert isinstance(last, TurnCompleted)
    assert last.result.output_text == "Hello there."
    assert last.result.status == "completed"
    assert last.result.session_id == session
    assert last.result.usage.model_calls == 1
    assert last.result.usage.input_tokens > 0
    assert sent(backend) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi!"},
    ]
    conversation = await client.conversations.retrieve(session)
    assert conversation.metadata == {"name": "greeting"}


async def test_a_local_tool_round_trip(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("add", {"a": 2, "b": 3}, call_id="call_add"))
    scripted.add_turn("2 + 3 = 5.")
    agent = Agent(client, model=backend.model, tools=[add])
    session = await agent.create_session()

    events = await collect(agent, "What is 2 + 3?", session)

    steps = [type(e).__name__ for e in events if not isinstance(e, TurnTextDelta)]
    assert steps == [
        "InferenceStarted",
        "LocalToolStarted",
        "LocalToolFinished",
        "InferenceStarted",
        "TurnCompleted",
    ]
    started = next(e for e in events if isinstance(e, LocalToolStarted))
    assert started.call == MessageToolCall("call_add", "add", '{"a": 2, "b": 3}')
    finished = next(e for e in events if isinstance(e, LocalToolFinished))
    assert finished.outcome == ToolOutcome("call_add", "add", '{"a": 2, "b": 3}', "5")
    result = cast("TurnCompleted", events[-1]).result
    assert result.output_text == "2 + 3 = 5."
    assert result.tool_results == (finished.outcome,)
    assert len(result.response_ids) == 2
    assert result.usage.model_calls == 2
    offered = backend.requests[0]["tools"][0]["function"]
    assert offered["name"] == "add"
    assert offered["parameters"]["required"] == ["a", "b"]
    assert sent(backend)[-1] == {"role": "tool", "tool_call_id": "call_add", "content": "5"}
    assert await items_of(client, session) == [
        "user",
        "function_call",
        "function_call_output",
        "assistant",
    ]


async def test_a_session_keeps_the_conversation_across_turns(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns("Nice to meet you, Ada.", "Your name is Ada.")
    agent = Agent(client, model=backend.model)
    session = await agent.create_session()

    first = await agent.create_turn("My name is Ada.", session, stream=False)
    second = await agent.turn([Message.user("What is my name?")], session)

    assert first.output_text == "Nice to meet you, Ada."
    assert second.output_text == "Your name is Ada."
    assert sent(backend) == [
        {"role": "user", "content": "My name is Ada."},
        {"role": "assistant", "content": "Nice to meet you, Ada."},
        {"role": "user", "content": "What is my name?"},
    ]
    other = await agent.create_session()
    scripted.add_turn("I do not know.")
    await agent.turn("What is my name?", other)
    assert sent(backend) == [{"role": "user", "content": "What is my name?"}]


async def test_a_declared_tool_waits_for_the_caller(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(
        tool_call("add", {"a": 1, "b": 1}, call_id="call_local"),
        tool_call("lookup", {"word": "loom"}, call_id="call_caller"),
    )
    scripted.add_turn("A loom weaves; and 1 + 1 = 2.")
    agent = Agent(client, model=backend.model, tools=[add, LOOKUP])
    session = await agent.create_session()

    waiting = await agent.turn("Define loom, and add 1 and 1.", session)

    assert waiting.status == "requires_action"
    assert waiting.pending_calls == (MessageToolCall("call_caller", "lookup", '{"word": "loom"}'),)
    assert [outcome.output for outcome in waiting.tool_results] == ["2"]
    with pytest.raises(ValueError, match="call_caller"):
        waiting.answer({})
    answer = waiting.answer({"call_caller": "a machine for weaving"})
    assert answer == (ToolOutput("call_caller", "a machine for weaving"),)

    done = await agent.turn(answer, session)

    assert done.status == "completed"
    assert done.output_text == "A loom weaves; and 1 + 1 = 2."
    assert [m for m in sent(backend) if m["role"] == "tool"] == [
        {"role": "tool", "tool_call_id": "call_local", "content": "2"},
        {"role": "tool", "tool_call_id": "call_caller", "content": "a machine for weaving"},
    ]


async def test_max_rounds_stops_the_turn_and_keeps_the_session_usable(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("add", {"a": 1, "b": 2}, call_id="call_1"))
    scripted.add_turn(tool_call("add", {"a": 3, "b": 4}, call_id="call_2"))
    scripted.add_turn("Done.")
    agent = Agent(client, model=backend.model, tools=[add], max_rounds=2)
    session = await agent.create_session()

    stopped = await agent.turn("Keep adding.", session)

    assert stopped.status == "max_rounds"
    assert [outcome.output for outcome in stopped.tool_results] == ["3", "7"]
    assert stopped.usage.model_calls == 2
    # the last outputs went to the session, so the next turn's history is whole
    assert (await items_of(client, session))[-2:] == ["function_call", "function_call_output"]
    follow_up = await agent.turn("Stop now.", session)
    assert follow_up.output_text == "Done."
    assert sent(backend)[-2:] == [
        {"role": "tool", "tool_call_id": "call_2", "content": "7"},
        {"role": "user", "content": "Stop now."},
    ]


async def test_a_failed_response_raises_an_upstream_error(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(raise_error(UpstreamRequestError("the model is asleep", status=400)))
    agent = Agent(client, model=backend.model)
    session = await agent.create_session()

    with pytest.raises(UpstreamError):
        await agent.turn("Wake up.", session)


async def test_the_event_logger_prints_the_turn(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(text("Let me add."), tool_call("add", {"a": 40, "b": 2}))
    scripted.add_turn("It is 42.")
    agent = Agent(client, model=backend.model, tools=[add])
    session = await agent.create_session()

    turn = agent.create_turn("40+2?", session)
    lines = [str(line) + line.end async for line in EventLogger().log(turn)]

    assert "".join(lines).splitlines() == [
        "inference> Let me add.",
        'tool_execution> Tool:add Args:{"a": 40, "b": 2}',
        "tool_execution> Tool:add Response:42",
        "inference> It is 42.",
    ]


async def test_an_agent_made_from_a_base_url_over_a_socket(
    app: Starlette, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Over a socket.")
    async with serve_async(app, lifespan=False) as base_url:
        agent = Agent(base_url, model=backend.model)
        async with agent:
            session = await agent.create_session()
            result = await agent.turn("Hello?", session)
            await agent.delete_session(session)

    assert result.output_text == "Over a socket."
    assert agent.client.is_closed()


def test_messages_become_responses_input_items() -> None:
    call = MessageToolCall("call_9", "add", '{"a": 1}')
    messages = [
        Message.developer("Be terse."),
        {"role": "user", "content": "Add."},
        Message.assistant("Adding.", (call,)),
        Message.tool("call_9", "1"),
        ToolOutput("call_8", "done"),
    ]

    items = input_items(cast("Any", messages))

    assert json.loads(json.dumps(items)) == [
        {"type": "message", "role": "developer", "content": "Be terse."},
        {"role": "user", "content": "Add."},
        {"type": "message", "role": "assistant", "content": "Adding."},
        {"type": "function_call", "call_id": "call_9", "name": "add", "arguments": '{"a": 1}'},
        {"type": "function_call_output", "call_id": "call_9", "output": "1"},
        {"type": "function_call_output", "call_id": "call_8", "output": "done"},
    ]
    with pytest.raises(ValueError, match="tool_call_id"):
        input_items([Message("tool", "orphan")])
