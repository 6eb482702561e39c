"""The agent loop's steps, driven by the scripted model: call the model, hand function calls
back, run server tools, enforce ``tool_choice`` and the budgets, and end the response."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import aclosing
from typing import Literal, TypeVar

import pytest
from pydantic import TypeAdapter

from agentloom.api import events as ev
from agentloom.api.items import FunctionCall, OutputMessage, WebSearchCall
from agentloom.api.response import Response, ResponseUsage
from agentloom.api.tools import Tool, ToolChoice
from agentloom.engine.loop import AgentLoop, LoopConfig
from agentloom.engine.tool_plan import ToolPlan, plan_tools
from agentloom.errors import ContextLengthExceededError, UpstreamRateLimitError
from agentloom.inference import base as inf
from agentloom.inference.base import ChatMessage
from agentloom.inference.scripted import (
    ScriptedModel,
    break_stream,
    finish,
    raise_error,
    text,
    tool_call,
    usage,
)

TOOLS = TypeAdapter(list[Tool])
CHOICE: TypeAdapter[ToolChoice] = TypeAdapter(ToolChoice)
E = TypeVar("E")

WEATHER = {"type": "function", "name": "get_weather", "parameters": {"type": "object"}}
TIME = {"type": "function", "name": "get_time", "parameters": {"type": "object"}}
WEB = {"type": "web_search"}
NOT_AVAILABLE = "Error: tool 'nope' is not available. Use only the tools offered."


def plan(
    tools: Sequence[Mapping[str, object]] = (), choice: object = "auto", *, parallel: bool = True
) -> ToolPlan:
    return plan_tools(
        TOOLS.validate_python(tools), CHOICE.validate_python(choice), parallel=parallel
    )


def make_loop(
    model: ScriptedModel,
    *,
    tools: ToolPlan | None = None,
    messages: Sequence[ChatMessage] = (ChatMessage(role="user", content="Hi"),),
    max_output_tokens: int | None = None,
    max_model_calls: int = 10,
    truncation: Literal["auto", "disabled"] = "disabled",
    context_window: int | None = None,
    max_tool_calls: int | None = None,
    collected: bool = False,
) -> AgentLoop:
    tool_plan = tools or plan()
    request = inf.ChatRequest(
        model="scripted",
        messages=tuple(messages),
        tools=tool_plan.specs,
        tool_choice=tool_plan.choice,
    )
    config = LoopConfig(
        provider=model,
        request=request,
        tools=tool_plan,
        max_output_tokens=max_output_tokens,
        max_model_calls=max_model_calls,
        truncation=truncation,
        truncation_retries=2,
        context_window=context_window,
        include_logprobs=False,
        max_tool_calls=max_tool_calls,
    )
    response = Response(id="resp_test", created_at=0, status="in_progress", model="scripted")
    return AgentLoop(response, config, collected=collected)


async def run(loop: AgentLoop) -> list[ev.StreamEvent]:
    return [event async for event in loop.run()]


def of_type(events: Sequence[ev.StreamEvent], kind: type[E]) -> list[E]:
    return [event for event in events if isinstance(event, kind)]


def output_types(response: Response) -> list[str]:
    return [item.type for item in response.output]


def function_calls(response: Response) -> list[FunctionCall]:
    return [item for item in response.output if isinstance(item, FunctionCall)]


def incomplete_reason(response: Response) -> str | None:
    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    return response.incomplete_details.reason


# --- one model call --------------------------------------------------------------------------


async def test_a_text_answer_completes_the_response() -> None:
    model = ScriptedModel(["Hello there."])
    loop = make_loop(model)

    events = await run(loop)

    assert isinstance(events[0], ev.ResponseCreated)
    assert isinstance(events[1], ev.ResponseInProgress)
    assert isinstance(events[-1], ev.ResponseCompleted)
    assert [e.sequence_number for e in events] == list(range(len(events)))
    final = events[-1].response
    assert final is loop.response
    assert final.status == "completed"
    assert final.completed_at is not None
    assert final.output_text() == "Hello there."
    assert output_types(final) == ["message"]


async def test_a_collected_run_yields_its_terminal_event_alone_and_times_its_output() -> None:
    model = ScriptedModel(["Hello there."])
    loop = make_loop(model, collected=True)

    events = await run(loop)

    assert [type(event) for event in events] == [ev.ResponseCompleted]
    assert events[0].response.output_text() == "Hello there."
    assert output_types(events[0].response) == ["message"]
    assert loop.first_output is not None
    assert loop.first_output >= loop.started


async def test_the_first_call_sends_the_configured_messages_without_a_budget() -> None:
    model = ScriptedModel(["Hi!"])
    messages = (
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="user", content="Hi"),
    )

    await run(make_loop(model, messages=messages))

    [sent] = model.requests
    assert sent.messages == messages
    assert sent.max_tokens is None


async def test_the_models_usage_is_the_responses_usage() -> None:
    model = ScriptedModel([["Hi", usage(10, 4, cached_tokens=3, reasoning_tokens=1)]])
    loop = make_loop(model)

    await run(loop)

    assert loop.response.usage == ResponseUsage.of(10, 4, cached=3, reasoning=1)


async def test_usage_adds_up_over_model_calls() -> None:
    model = ScriptedModel([[tool_call("nope"), usage(10, 2)], ["Sorry.", usage(15, 3)]])
    loop = make_loop(model)

    await run(loop)

    assert loop.response.usage == ResponseUsage.of(25, 5)


@pytest.mark.parametrize(
    ("reason", "expected"),
    [("length", "max_output_tokens"), ("content_filter", "content_filter")],
)
async def test_a_cut_finish_makes_the_response_incomplete(
    reason: inf.FinishReason, expected: str
) -> None:
    model = ScriptedModel([["The beginning of", finish(reason)]])
    loop = make_loop(model)

    events = await run(loop)

    assert isinstance(events[-1], ev.ResponseIncomplete)
    assert incomplete_reason(loop.response) == expected
    assert loop.response.completed_at is None
    assert loop.response.output_text() == "The beginning of"


# --- function calls and tool_choice ----------------------------------------------------------


async def test_parallel_function_calls_are_handed_back_in_order() -> None:
    model = ScriptedModel(
        [
            [
                tool_call("get_weather", {"city": "Oslo"}, "call_1"),
                tool_call("get_time", {}, "call_2"),
            ]
        ]
    )
    loop = make_loop(model, tools=plan([WEATHER, TIME]))

    await run(loop)

    assert loop.response.status == "completed"
    calls = function_calls(loop.response)
    assert [(c.name, c.call_id, c.arguments) for c in calls] == [
        ("get_weather", "call_1", '{"city": "Oslo"}'),
        ("get_time", "call_2", "{}"),
    ]
    assert len(model.requests) == 1  # the client runs them: the model is not called again


async def test_parallel_tool_calls_false_hands_back_only_the_first() -> None:
    model = ScriptedModel([[tool_call("get_time"), tool_call("get_weather")]])
    loop = make_loop(model, tools=plan([WEATHER, TIME], parallel=False))

    await run(loop)

    assert [c.name for c in function_calls(loop.response)] == ["get_time"]
    assert len(model.requests) == 1


async def test_required_choice_answered_with_text_asks_the_model_again() -> None:
    model = ScriptedModel(["I'd rather chat.", [tool_call("get_time", {}, "call_t")]])
    loop = make_loop(model, tools=plan([WEATHER, TIME], "required"))

    await run(loop)

    assert output_types(loop.response) == ["message", "function_call"]
    retry = model.requests[1].messages
    assert retry[-2] == ChatMessage(role="assistant", content="I'd rather chat.")
    assert retry[-1] == ChatMessage(
        role="user",
        content="You must call one of these tools now: get_time, get_weather. "
        "Reply with a tool call.",
    )
    assert loop.response.status == "completed"


async def test_a_required_call_never_made_ends_at_the_model_call_limit() -> None:
    model = ScriptedModel(lambda request: "No tools for me.")
    loop = make_loop(model, tools=plan([TIME], "required"), max_model_calls=3)

    events = await run(loop)

    assert isinstance(events[-1], ev.ResponseIncomplete)
    assert incomplete_reason(loop.response) == "max_messages"
    assert len(model.requests) == 3
    assert output_types(loop.response) == ["message", "message", "message"]


async def test_a_call_of_an_unknown_function_is_told_to_the_model() -> None:
    model = ScriptedModel([["Let me see.", tool_call("nope", {"x": 1}, "call_n")], "Sorry."])
    loop = make_loop(model, tools=plan([TIME]))

    await run(loop)

    assert output_types(loop.response) == ["message", "message"]
    assert function_calls(loop.response) == []
    retry = model.requests[1].messages
    assert retry[-2] == ChatMessage(
        role="assistant",
        content="Let me see.",
        tool_calls=(inf.ToolCall("call_n", "nope", '{"x": 1}'),),
    )
    assert retry[-1] == ChatMessage(role="tool", tool_call_id="call_n", content=NOT_AVAILABLE)


async def test_tool_choice_none_drops_calls_and_asks_again() -> None:
    model = ScriptedModel([[tool_call("get_time", {}, "call_t")], "It is noon, I think."])
    loop = make_loop(model, tools=plan([TIME], "none"))

    await run(loop)

    assert model.requests[0].tools == ()
    assert model.requests[0].tool_choice is None
    assert output_types(loop.response) == ["message"]
    assert model.requests[1].messages[-1].role == "tool"
    assert loop.response.output_text() == "It is noon, I think."


# --- budgets ---------------------------------------------------------------------------------


async def test_max_output_tokens_is_a_budget_for_the_whole_response() -> None:
    model = ScriptedModel(
        [[tool_call("nope"), usage(10, 30)], [tool_call("nope"), usage(10, 20)], "never played"]
    )
    loop = make_loop(model, max_output_tokens=50)

    events = await run(loop)

    assert [r.max_tokens for r in model.requests] == [50, 20]
    assert isinstance(events[-1], ev.ResponseIncomplete)
    assert incomplete_reason(loop.response) == "max_output_tokens"
    assert model.remaining == 1


async def test_an_unknown_call_that_never_stops_ends_at_the_model_call_limit() -> None:
    model = ScriptedModel(lambda request: [tool_call("nope")])
    loop = make_loop(model, max_model_calls=4)

    await run(loop)

    assert incomplete_reason(loop.response) == "max_messages"
    assert len(model.requests) == 4
    assert loop.response.output == []


# --- failures --------------------------------------------------------------------------------


async def test_an_upstream_error_fails_the_response() -> None:
    error = UpstreamRateLimitError("Slow down.", status=429)
    model = ScriptedModel([[raise_error(error)]])
    loop = make_loop(model)

    events = await run(loop)

    assert isinstance(events[-1], ev.ResponseFailed)
    assert loop.failure is error
    assert loop.response.status == "failed"
    assert loop.response.error is not None
    assert (loop.response.error.code, loop.response.error.message) == (
        "rate_limit_exceeded",
        "Slow down.",
    )
    assert loop.response.output == []


async def test_a_stream_broken_mid_message_keeps_the_text_as_incomplete() -> None:
    model = ScriptedModel([["Half of the", break_stream()]])
    loop = make_loop(model)

    events = await run(loop)

    assert isinstance(events[-1], ev.ResponseFailed)
    [message] = loop.response.output
    assert isinstance(message, OutputMessage)
    assert message.status == "incomplete"
    assert loop.response.output_text() == "Half of the"
    done = of_type(events, ev.OutputItemDone)[-1].item
    assert isinstance(done, OutputMessage)
    assert done.status == "incomplete"


async def test_a_context_overflow_drops_the_oldest_turn_and_retries() -> None:
    overflow = ContextLengthExceededError("too long")
    model = ScriptedModel([[raise_error(overflow)], "Fits now."])
    messages = (
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="user", content="Old question"),
        ChatMessage(role="assistant", content="Old answer"),
        ChatMessage(role="user", content="New question"),
    )
    loop = make_loop(model, messages=messages, truncation="auto")

    await run(loop)

    assert loop.response.status == "completed"
    assert model.requests[1].messages == (messages[0], messages[3])


async def test_a_context_overflow_fails_without_auto_truncation() -> None:
    model = ScriptedModel([[raise_error(ContextLengthExceededError("too long"))]])
    loop = make_loop(model, truncation="disabled")

    await run(loop)

    assert loop.response.status == "failed"
    assert loop.response.error is not None
    assert loop.response.error.code == "context_length_exceeded"
    assert len(model.requests) == 1


async def test_auto_truncation_fits_the_input_into_the_context_window() -> None:
    model = ScriptedModel(["Fits."])
    messages = (
        ChatMessage(role="user", content="old " * 500),
        ChatMessage(role="assistant", content="ok"),
        ChatMessage(role="user", content="New question"),
    )

    await run(make_loop(model, messages=messages, truncation="auto", context_window=100))

    assert model.requests[0].messages == (messages[2],)


async def test_an_abandoned_response_is_cancelled_with_its_partial_output() -> None:
    model = ScriptedModel([text("Streaming along nicely", chunk_size=5)])
    loop = make_loop(model)

    async with aclosing(loop.run()) as events:
        async for event in events:
            if isinstance(event, ev.OutputTextDelta):
                break

    abandoned = loop.abandoned()
    assert abandoned.status == "cancelled"
    [message] = abandoned.output
    assert isinstance(message, OutputMessage)
    assert message.status == "incomplete"
    assert abandoned.output_text() == "Strea"


# --- server tools ----------------------------------------------------------------------------


async def test_a_server_tool_runs_and_the_model_answers_with_its_result() -> None:
    model = ScriptedModel([[tool_call("web_search", {"query": "news"}, "call_w")], "No web."])
    loop = make_loop(model, tools=plan([WEB]))

    events = await run(loop)

    assert output_types(loop.response) == ["web_search_call", "message"]
    searched = loop.response.output[0]
    assert isinstance(searched, WebSearchCall)
    assert searched.status == "failed"  # no search provider on this server
    assert of_type(events, ev.WebSearchCallInProgress)[0].item_id == searched.id
    told = model.requests[1].messages[-1]
    assert told.role == "tool"
    assert told.tool_call_id == "call_w"
    assert isinstance(told.content, str)
    assert told.content.startswith("Error: the web search failed: web search is unavailable")
    assert loop.response.status == "completed"


async def test_a_forced_server_tool_is_no_longer_forced_once_it_ran() -> None:
    model = ScriptedModel([[tool_call("web_search", {"query": "news"})], "Done."])
    loop = make_loop(model, tools=plan([WEB], {"type": "web_search"}))

    await run(loop)

    assert model.requests[0].tool_choice == inf.NamedToolChoice("web_search")
    assert model.requests[1].tool_choice == "auto"


async def test_max_tool_calls_refuses_further_calls_and_withdraws_server_tools() -> None:
    model = ScriptedModel(
        [
            [
                tool_call("web_search", {"query": "a"}, "call_1"),
                tool_call("web_search", {"query": "b"}, "call_2"),
            ],
            "Enough.",
        ]
    )
    loop = make_loop(model, tools=plan([WEB, TIME]), max_tool_calls=1)

    await run(loop)

    assert output_types(loop.response) == ["web_search_call", "message"]
    second = model.requests[1]
    assert [spec.name for spec in second.tools] == ["get_time"]
    over = next(m for m in second.messages if m.tool_call_id == "call_2")
    assert over.content == (
        "Error: the limit of tool calls for this response is reached; answer with what you have."
    )
