"""Tool planning: which tools the model is offered, and how ``tool_choice`` is enforced on
the calls the scripted model makes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from pydantic import TypeAdapter

from agentloom.api.items import FunctionCall, ToolSearchCall, ToolSearchOutput
from agentloom.api.tools import Tool, ToolChoice
from agentloom.engine.client_calls import ClientCall
from agentloom.engine.tool_plan import ToolPlan, plan_tools
from agentloom.engine.turn import Sequencer, TurnResult, TurnStreamer
from agentloom.errors import InvalidRequestError
from agentloom.inference import base as inf
from agentloom.inference.scripted import ScriptedModel, TurnPart, tool_call

TOOLS = TypeAdapter(list[Tool])
CHOICE: TypeAdapter[ToolChoice] = TypeAdapter(ToolChoice)
REQUEST = inf.ChatRequest(model="scripted", messages=(inf.ChatMessage(role="user", content="Hi"),))


def function(name: str) -> dict[str, object]:
    return {"type": "function", "name": name, "parameters": {"type": "object", "properties": {}}}


WEATHER, TIME, NEWS = function("get_weather"), function("get_time"), function("get_news")
WEB = {"type": "web_search"}


def plan(
    tools: Sequence[Mapping[str, object]], choice: object = "auto", *, parallel: bool = True
) -> ToolPlan:
    return plan_tools(
        TOOLS.validate_python(tools), CHOICE.validate_python(choice), parallel=parallel
    )


def offered(tool_plan: ToolPlan) -> list[str]:
    return [spec.name for spec in tool_plan.specs]


async def play(tool_plan: ToolPlan, *parts: TurnPart) -> TurnResult:
    """One scripted turn streamed under the plan's call policy."""
    model = ScriptedModel()
    model.add_turn(*parts)
    turn = TurnStreamer(Sequencer(), first_output_index=0, policy=tool_plan.policy)
    async for _ in turn.run(model.stream(REQUEST)):
        pass
    return turn.result


def names(calls: Sequence[ClientCall]) -> list[str]:
    """The names of the client calls a turn handed on."""
    return [call.type if isinstance(call, ToolSearchCall) else call.name for call in calls]


# --- what is offered -------------------------------------------------------------------------


def test_auto_offers_every_function_in_order() -> None:
    tool_plan = plan([WEATHER, TIME], parallel=False)

    assert offered(tool_plan) == ["get_weather", "get_time"]
    assert tool_plan.choice == "auto"
    assert tool_plan.policy.offered == {"get_weather", "get_time"}
    assert tool_plan.policy.single_call is True
    assert tool_plan.policy.required is False
    assert set(tool_plan.policy.client) == {"get_weather", "get_time"}
    assert tool_plan.server == {}


def test_no_tools_means_no_choice_is_sent() -> None:
    tool_plan = plan([], "required")

    assert tool_plan.specs == ()
    assert tool_plan.choice is None
    assert tool_plan.policy.required is False


def test_none_offers_nothing() -> None:
    tool_plan = plan([WEATHER, TIME], "none")

    assert tool_plan.specs == ()
    assert tool_plan.choice is None
    assert tool_plan.policy.offered == frozenset()
    assert tool_plan.offer_listed is False


def test_required_offers_everything_and_requires_a_call() -> None:
    tool_plan = plan([WEATHER, TIME], "required")

    assert offered(tool_plan) == ["get_weather", "get_time"]
    assert tool_plan.choice == "required"
    assert tool_plan.policy.required is True


def test_a_named_function_is_the_only_one_offered_and_forced() -> None:
    tool_plan = plan([WEATHER, TIME], {"type": "function", "name": "get_time"})

    assert offered(tool_plan) == ["get_time"]
    assert tool_plan.choice == inf.NamedToolChoice("get_time")
    assert tool_plan.policy.required is True
    assert tool_plan.offer_listed is False


def test_allowed_tools_restrict_the_offer_in_their_mode() -> None:
    allowed = {
        "type": "allowed_tools",
        "mode": "auto",
        "tools": [
            {"type": "function", "name": "get_news"},
            {"type": "function", "name": "get_time"},
        ],
    }

    tool_plan = plan([WEATHER, TIME, NEWS], allowed)

    assert offered(tool_plan) == ["get_news", "get_time"]
    assert tool_plan.choice == "auto"
    assert tool_plan.policy.required is False


def test_a_namespace_is_offered_flattened_and_selectable_by_its_name() -> None:
    namespace = {
        "type": "namespace",
        "name": "crm",
        "tools": [{"type": "function", "name": "find"}, {"type": "function", "name": "add"}],
    }
    allowed = {
        "type": "allowed_tools",
        "mode": "required",
        "tools": [{"type": "namespace", "name": "crm"}],
    }

    tool_plan = plan([WEATHER, namespace], allowed)

    assert offered(tool_plan) == ["crm__find", "crm__add"]
    assert tool_plan.choice == "required"
    assert tool_plan.policy.client["crm__find"].namespace == "crm"


def test_a_server_tool_is_offered_as_a_function_the_server_runs() -> None:
    tool_plan = plan([WEATHER, WEB])

    assert offered(tool_plan) == ["get_weather", "web_search"]
    assert tool_plan.policy.hosted == {"web_search"}
    assert set(tool_plan.server) == {"web_search"}


def test_a_hosted_tool_choice_forces_that_tool() -> None:
    tool_plan = plan([WEATHER, WEB], {"type": "web_search"})

    assert offered(tool_plan) == ["web_search"]
    assert tool_plan.choice == inf.NamedToolChoice("web_search")


# --- mistakes --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("choice", "message", "param"),
    [
        (
            {"type": "function", "name": "get_news"},
            "Tool choice 'get_news' not found in 'tools' parameter.",
            "tool_choice",
        ),
        (
            {"type": "file_search"},
            "Tool choice 'file_search' not found in 'tools' parameter.",
            "tool_choice",
        ),
        (
            {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function"}]},
            "An allowed function tool needs a name ({'type': 'function', 'name': ...}).",
            "tool_choice.tools[0]",
        ),
        (
            {
                "type": "allowed_tools",
                "mode": "auto",
                "tools": [{"type": "namespace", "name": "x"}],
            },
            "Namespace 'x' not found in 'tools' parameter.",
            "tool_choice.tools[0]",
        ),
    ],
)
def test_a_choice_naming_what_is_not_offered_is_a_400(
    choice: dict[str, object], message: str, param: str
) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        plan([WEATHER, TIME], choice)

    assert caught.value.message == message
    assert caught.value.param == param


def test_a_duplicate_function_name_is_a_400_naming_the_second() -> None:
    with pytest.raises(InvalidRequestError) as caught:
        plan([WEATHER, TIME, WEATHER])

    assert caught.value.message == "Duplicate tool name 'get_weather'."
    assert caught.value.param == "tools[2].name"


# --- plans that change during a response -----------------------------------------------------


def test_relaxed_lets_the_model_answer_once_a_forced_call_ran() -> None:
    forced = plan([WEATHER, WEB], {"type": "web_search"})

    relaxed = forced.relaxed()

    assert relaxed.choice == "auto"
    assert relaxed.policy.required is False
    assert relaxed.specs == forced.specs
    unforced = plan([WEATHER])
    assert unforced.relaxed() is unforced


def test_without_server_tools_keeps_only_the_clients() -> None:
    tool_plan = plan([WEATHER, WEB], {"type": "web_search"}).without_server_tools()

    assert offered(tool_plan) == []
    assert tool_plan.server == {}
    assert tool_plan.choice is None
    mixed = plan([WEATHER, WEB]).without_server_tools()
    assert offered(mixed) == ["get_weather"]
    assert mixed.choice == "auto"


def test_tools_a_tool_search_found_are_offered_next() -> None:
    found = ToolSearchOutput.model_validate(
        {"type": "tool_search_output", "call_id": "call_s", "tools": [TIME]}
    )

    tool_plan = plan([WEATHER]).with_loaded([found], first_new=0)

    assert offered(tool_plan) == ["get_weather", "get_time"]
    assert "get_time" in tool_plan.policy.offered
    assert plan([WEATHER], "none").with_loaded([found], first_new=0).specs == ()


# --- enforcement on the model's calls --------------------------------------------------------


async def test_a_named_choice_rejects_calls_of_other_tools() -> None:
    tool_plan = plan([WEATHER, TIME], {"type": "function", "name": "get_weather"})

    result = await play(
        tool_plan, tool_call("get_time", call_id="call_t"), tool_call("get_weather", call_id="c_w")
    )

    assert names(result.calls) == ["get_weather"]
    assert [(c.id, c.name) for c in result.rejected] == [("call_t", "get_time")]


async def test_choice_none_rejects_every_call() -> None:
    result = await play(plan([WEATHER], "none"), tool_call("get_weather", {"city": "Rome"}))

    assert result.calls == []
    assert [c.name for c in result.rejected] == ["get_weather"]


async def test_a_call_of_a_namespaced_tool_goes_back_under_its_own_name() -> None:
    namespace = {
        "type": "namespace",
        "name": "crm",
        "tools": [{"type": "function", "name": "find"}],
    }

    result = await play(plan([namespace]), tool_call("crm__find", {"q": "x"}))

    call = result.calls[0]
    assert isinstance(call, FunctionCall)
    assert (call.name, call.namespace, call.arguments) == ("find", "crm", '{"q": "x"}')


async def test_parallel_false_keeps_only_the_first_call() -> None:
    result = await play(
        plan([WEATHER, TIME], parallel=False), tool_call("get_time"), tool_call("get_weather")
    )

    assert names(result.calls) == ["get_time"]
