"""``namespace`` tools: a named group of the client's functions, flattened for chat backends
(``group__name``) and called back as ``function_call`` items carrying the ``namespace``."""

from __future__ import annotations

from typing import Any, cast

import openai
import pytest
from openai.types.responses import (
    NamespaceToolParam,
    Response,
    ResponseFunctionToolCall,
    ResponseInputItemParam,
    ResponseStreamEvent,
    ToolParam,
)

from agentloom.inference.scripted import ScriptedModel, tool_call
from agentloom.testing.backend import FakeBackend

CLOSE_PARAMETERS: dict[str, object] = {
    "type": "object",
    "properties": {"target": {"type": "string"}},
    "required": ["target"],
    "additionalProperties": False,
}
AGENTS: NamespaceToolParam = {
    "type": "namespace",
    "name": "multi_agent_v1",
    "description": "Tools for spawning and managing sub-agents.",
    "tools": [
        {
            "type": "function",
            "name": "close_agent",
            "description": "Close an agent.",
            "strict": False,
            "parameters": CLOSE_PARAMETERS,
        },
        {"type": "function", "name": "list_agents"},
    ],
}
SHELL: ToolParam = {
    "type": "function",
    "name": "exec_command",
    "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
    "strict": False,
}
FLAT_CLOSE = "multi_agent_v1__close_agent"


def sent(backend: FakeBackend, index: int = -1) -> dict[str, Any]:
    return cast("dict[str, Any]", backend.requests[index])


def offered(backend: FakeBackend, index: int = -1) -> list[str]:
    return [tool["function"]["name"] for tool in sent(backend, index).get("tools", [])]


def calls(response: Response) -> list[ResponseFunctionToolCall]:
    return [item for item in response.output if item.type == "function_call"]


async def test_namespace_is_flattened_and_its_call_carries_the_namespace(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call(FLAT_CLOSE, {"target": "a1"}, call_id="call_c1"))

    response = await client.responses.create(
        model=backend.model, input="Close a1.", tools=[SHELL, AGENTS]
    )

    (call,) = calls(response)
    assert (call.name, call.namespace, call.call_id) == ("close_agent", "multi_agent_v1", "call_c1")
    assert call.arguments == '{"target": "a1"}'
    assert offered(backend) == ["exec_command", FLAT_CLOSE, "multi_agent_v1__list_agents"]
    close, listing = sent(backend)["tools"][1:]
    assert close["function"] == {
        "name": FLAT_CLOSE,
        "description": "(Tool group 'multi_agent_v1': Tools for spawning and managing "
        "sub-agents.) Close an agent.",
        "parameters": CLOSE_PARAMETERS,
    }
    assert listing["function"]["parameters"] == {"type": "object", "properties": {}}
    # the echo is the namespace as sent, also once stored
    echoed = response.model_dump(exclude_none=True)["tools"][1]
    assert echoed == {**AGENTS, "tools": [*AGENTS["tools"]]}
    stored = await client.responses.retrieve(response.id)
    assert stored.tools == response.tools
    assert calls(stored) == [call]


async def test_streamed_call_of_a_namespaced_function(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call(FLAT_CLOSE, {"target": "a1"}, call_id="call_s", chunk_size=4))

    stream = await client.responses.create(
        model=backend.model, input="Close a1.", tools=[AGENTS], stream=True
    )
    events: list[ResponseStreamEvent] = [event async for event in stream]

    kinds = [e.type for e in events]
    assert kinds[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert kinds[-3:] == [
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert set(kinds[3:-3]) == {"response.function_call_arguments.delta"}
    added, done = events[2], events[-2]
    assert added.type == "response.output_item.added"
    assert done.type == "response.output_item.done"
    for item in (added.item, done.item):
        assert item.type == "function_call"
        assert (item.name, item.namespace) == ("close_agent", "multi_agent_v1")
    assert events[-3].type == "response.function_call_arguments.done"
    assert events[-3].name == "close_agent"


async def test_stateless_replay_shows_the_backend_the_flattened_name(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    """Codex's way: ``store: false``, the whole history sent again with the next input."""
    scripted.add_turns([tool_call(FLAT_CLOSE, {"target": "a1"}, call_id="call_r")], "Closed.")
    question: ResponseInputItemParam = {"role": "user", "content": "Close a1."}
    first = await client.responses.create(
        model=backend.model, input=[question], tools=[AGENTS], store=False
    )
    (call,) = calls(first)

    second = await client.responses.create(
        model=backend.model,
        input=[
            question,
            cast("ResponseInputItemParam", call.model_dump(exclude_none=True)),
            {"type": "function_call_output", "call_id": "call_r", "output": "closed"},
        ],
        tools=[AGENTS],
        store=False,
    )

    assert second.output_text == "Closed."
    assistant, tool = sent(backend)["messages"][1:]
    assert assistant["tool_calls"] == [
        {
            "id": "call_r",
            "type": "function",
            "function": {"name": FLAT_CLOSE, "arguments": '{"target": "a1"}'},
        }
    ]
    assert tool == {"role": "tool", "content": "closed", "tool_call_id": "call_r"}


async def test_stored_chain_keeps_the_namespace(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns([tool_call(FLAT_CLOSE, {"target": "a1"}, call_id="call_p")], "Done.")
    first = await client.responses.create(model=backend.model, input="Close a1.", tools=[AGENTS])

    second = await client.responses.create(
        model=backend.model,
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": "call_p", "output": "ok"}],
        tools=[AGENTS],
    )

    assert second.output_text == "Done."
    assert sent(backend)["messages"][1]["tool_calls"][0]["function"]["name"] == FLAT_CLOSE
    listed = await client.responses.input_items.list(first.id)
    assert [i.type for i in listed.data] == ["message"]
    (stored_call,) = calls(await client.responses.retrieve(first.id))
    assert stored_call.namespace == "multi_agent_v1"


@pytest.mark.parametrize(
    "choice",
    [
        {"type": "function", "name": "close_agent"},  # the name in its namespace
        {"type": "function", "name": FLAT_CLOSE},  # the flattened name
        {
            "type": "allowed_tools",
            "mode": "required",
            "tools": [{"type": "function", "name": FLAT_CLOSE}],
        },
    ],
    ids=["inner-name", "flattened-name", "allowed-tools"],
)
async def test_tool_choice_names_a_namespaced_function(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    choice: dict[str, Any],
) -> None:
    scripted.add_turn(tool_call(FLAT_CLOSE, {"target": "a1"}))

    response = await client.responses.create(
        model=backend.model,
        input="Close a1.",
        tools=[SHELL, AGENTS],
        tool_choice=cast("Any", choice),
    )

    assert [c.name for c in calls(response)] == ["close_agent"]
    assert offered(backend) == [FLAT_CLOSE]
    assert sent(backend)["tool_choice"] in (
        "required",
        {"type": "function", "function": {"name": FLAT_CLOSE}},
    )


async def test_allowed_tools_may_name_a_whole_namespace(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("ok")
    choice = {
        "type": "allowed_tools",
        "mode": "auto",
        "tools": [{"type": "namespace", "name": "multi_agent_v1"}],
    }

    await client.responses.create(
        model=backend.model, input="Hi", tools=[SHELL, AGENTS], tool_choice=cast("Any", choice)
    )

    assert offered(backend) == [FLAT_CLOSE, "multi_agent_v1__list_agents"]


async def test_codex_style_namespace_ending_in_separator_is_joined_as_is(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("mcp__docs__search", {}))
    tool = {
        "type": "namespace",
        "name": "mcp__docs__",
        "description": "",
        "tools": [{"type": "function", "name": "search"}],
    }

    response = await client.responses.create(
        model=backend.model, input="Search.", tools=[cast("ToolParam", tool)]
    )

    assert offered(backend) == ["mcp__docs__search"]
    (call,) = calls(response)
    assert (call.name, call.namespace) == ("search", "mcp__docs__")


# --- errors ----------------------------------------------------------------------------------


def _namespace(*members: dict[str, Any], name: str = "group") -> dict[str, Any]:
    return {"type": "namespace", "name": name, "description": "A group.", "tools": list(members)}


@pytest.mark.parametrize(
    ("tools", "param", "message"),
    [
        ([_namespace()], "tools[0].tools", "at least 1"),
        ([_namespace({"type": "function", "name": "a b"})], "tools[0].tools[0].name", "pattern"),
        ([_namespace({"type": "function", "name": "x"}, name="")], "tools[0].name", "at least 1"),
        ([_namespace({"type": "mcp", "server_label": "x"})], "tools[0].tools[0]", "tag"),
        (
            [_namespace({"type": "function", "name": "x"}, {"type": "function", "name": "x"})],
            "tools[0].tools[1].name",
            "Duplicate tool name 'x' in namespace 'group'",
        ),
        (
            [
                {"type": "function", "name": "group__x"},
                _namespace({"type": "function", "name": "x"}),
            ],
            "tools[1].tools[0].name",
            "Duplicate tool name 'group__x'",
        ),
        (
            [_namespace({"type": "function", "name": "f" * 60}, name="long")],
            "tools[0].tools[0].name",
            "longer than 64 characters",
        ),
    ],
    ids=["empty", "bad-name", "no-name", "not-a-function", "duplicate", "collision", "too-long"],
)
async def test_malformed_namespace_is_a_400_pointing_inside_it(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    tools: list[dict[str, Any]],
    param: str,
    message: str,
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model=backend.model, input="Hi", tools=cast("list[ToolParam]", tools)
        )

    assert caught.value.param == param
    assert message in caught.value.message
    assert backend.requests == []


async def test_tool_choice_of_an_unknown_or_ambiguous_inner_name_is_a_400(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    both = [
        _namespace({"type": "function", "name": "x"}, name="one"),
        _namespace({"type": "function", "name": "x"}, name="two"),
    ]
    for choice, message in (("x", "ambiguous"), ("nope", "not found")):
        with pytest.raises(openai.BadRequestError) as caught:
            await client.responses.create(
                model=backend.model,
                input="Hi",
                tools=cast("list[ToolParam]", both),
                tool_choice={"type": "function", "name": choice},
            )
        assert caught.value.param == "tool_choice"
        assert message in caught.value.message


# --- tools loaded by a client-run tool search -------------------------------------------------

TOOL_SEARCH: dict[str, Any] = {
    "type": "tool_search",
    "execution": "client",
    "description": "Search deferred tools.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
}


async def test_client_tool_search_loads_a_namespace_for_the_next_turns(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    """Codex's deferred tools: the model searches, the client answers with the tools found
    (``tool_search_output``), and from then on the model may call them."""
    scripted.add_turns(
        [tool_call("tool_search", {"query": "close agent"}, call_id="call_ts")],
        [tool_call(FLAT_CLOSE, {"target": "a1"}, call_id="call_c")],
    )
    question: ResponseInputItemParam = {"role": "user", "content": "Close a1."}
    tools = [SHELL, cast("ToolParam", TOOL_SEARCH)]
    first = await client.responses.create(
        model=backend.model, input=[question], tools=tools, store=False
    )
    (search,) = first.output
    assert search.type == "tool_search_call"
    assert (search.call_id, search.arguments, search.execution) == (
        "call_ts",
        {"query": "close agent"},
        "client",
    )
    assert offered(backend) == ["exec_command", "tool_search"]
    found = {"type": "tool_search_output", "call_id": "call_ts", "execution": "client"}

    second = await client.responses.create(
        model=backend.model,
        input=[
            question,
            cast("ResponseInputItemParam", search.model_dump(exclude_none=True)),
            cast("ResponseInputItemParam", {**found, "tools": [AGENTS]}),
        ],
        tools=tools,
        store=False,
    )

    (call,) = calls(second)
    assert (call.name, call.namespace) == ("close_agent", "multi_agent_v1")
    assert offered(backend) == [
        "exec_command",
        "tool_search",
        FLAT_CLOSE,
        "multi_agent_v1__list_agents",
    ]
    searched, told = sent(backend)["messages"][1:]
    assert searched["tool_calls"][0]["function"] == {
        "name": "tool_search",
        "arguments": '{"query": "close agent"}',
    }
    assert told["role"] == "tool"
    assert told["tool_call_id"] == "call_ts"
    assert f"- {FLAT_CLOSE}: Close an agent." in told["content"]


async def test_server_run_tool_search_is_a_400(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model=backend.model,
            input="Hi",
            tools=[cast("ToolParam", {**TOOL_SEARCH, "execution": "server"})],
        )

    assert caught.value.param == "tools[0].execution"
