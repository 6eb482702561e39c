"""The shell and file-editing tools the client runs (``shell``, ``local_shell``,
``apply_patch``): offered to chat backends as functions, called back as ``shell_call`` /
``local_shell_call`` / ``apply_patch_call`` items (``response.shell_call_command.*`` events for
a shell call's commands), their outputs taken back and shown to the backend."""

from __future__ import annotations

from typing import Any, cast

import openai
import pytest
from openai.types.responses import (
    Response,
    ResponseApplyPatchToolCall,
    ResponseFunctionShellToolCall,
    ResponseInputItemParam,
    ResponseStreamEvent,
    ToolParam,
)

from agentloom.inference.scripted import ScriptedModel, tool_call
from agentloom.testing.backend import FakeBackend

SHELL = cast("ToolParam", {"type": "shell", "environment": {"type": "local"}})
APPLY_PATCH = cast("ToolParam", {"type": "apply_patch"})
LOCAL_SHELL = cast("ToolParam", {"type": "local_shell"})
DIFF = "@@\n-hello\n+hello, world\n"


def sent(backend: FakeBackend, index: int = -1) -> dict[str, Any]:
    return cast("dict[str, Any]", backend.requests[index])


def calls(response: Response, kind: str) -> list[Any]:
    return [item for item in response.output if item.type == kind]


async def test_shell_is_a_function_and_its_call_a_shell_call(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    arguments = {"commands": ["ls -la", "cat README.md"], "timeout_ms": 5000}
    scripted.add_turn(tool_call("shell", arguments, call_id="call_s"))

    response = await client.responses.create(
        model=backend.model, input="What is here?", tools=[SHELL, APPLY_PATCH]
    )

    (call,) = calls(response, "shell_call")
    assert isinstance(call, ResponseFunctionShellToolCall)
    assert call.call_id == "call_s"
    assert call.id.startswith("sh_")
    assert call.status == "completed"
    assert call.action.commands == ["ls -la", "cat README.md"]
    assert call.action.timeout_ms == 5000
    shell, patch = (tool["function"] for tool in sent(backend)["tools"])
    assert shell["name"] == "shell"
    assert shell["parameters"]["required"] == ["commands"]
    assert patch["name"] == "apply_patch"
    assert [t.type for t in response.tools] == ["shell", "apply_patch"]
    stored = await client.responses.retrieve(response.id)
    assert calls(stored, "shell_call") == [call]


async def test_apply_patch_call_carries_the_operation(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    operation = {"type": "update_file", "path": "README.md", "diff": DIFF}
    scripted.add_turn(tool_call("apply_patch", operation, call_id="call_p"))

    response = await client.responses.create(
        model=backend.model, input="Greet the world", tools=[APPLY_PATCH]
    )

    (call,) = calls(response, "apply_patch_call")
    assert isinstance(call, ResponseApplyPatchToolCall)
    assert call.id.startswith("apc_")
    assert call.operation.model_dump() == operation


async def test_loose_arguments_still_make_well_formed_calls(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(
        tool_call("shell", {"command": "pwd"}, call_id="a"),
        tool_call("apply_patch", {"path": "gone.txt", "type": "delete_file"}, call_id="b"),
        tool_call("local_shell", "not json", call_id="c"),
    )

    response = await client.responses.create(
        model=backend.model, input="x", tools=[SHELL, APPLY_PATCH, LOCAL_SHELL]
    )

    shell, patch, local = response.output
    assert shell.type == "shell_call"
    assert shell.action.commands == ["pwd"]
    assert patch.type == "apply_patch_call"
    assert patch.operation.model_dump() == {"type": "delete_file", "path": "gone.txt"}
    assert local.type == "local_shell_call"
    assert (local.action.type, local.action.command) == ("exec", ["not json"])


async def test_shell_call_streams_its_commands(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("shell", {"commands": ["ls", "pwd"]}, chunk_size=3))

    stream = await client.responses.create(
        model=backend.model, input="x", tools=[SHELL], stream=True
    )
    events: list[ResponseStreamEvent] = [event async for event in stream]

    kinds = [e.type for e in events]
    assert kinds == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        *["response.shell_call_command.added", "response.shell_call_command.delta"],
        "response.shell_call_command.done",
        *["response.shell_call_command.added", "response.shell_call_command.delta"],
        "response.shell_call_command.done",
        "response.output_item.done",
        "response.completed",
    ]
    added, done = events[2], events[-2]
    assert added.type == "response.output_item.added"
    assert added.item.type == "shell_call"
    assert added.item.action.commands == []
    assert done.type == "response.output_item.done"
    assert done.item.type == "shell_call"
    assert done.item.action.commands == ["ls", "pwd"]
    finished = [e for e in events if e.type == "response.shell_call_command.done"]
    assert [(e.command_index, e.command, e.output_index) for e in finished] == [
        (0, "ls", 0),
        (1, "pwd", 0),
    ]


async def test_outputs_continue_a_stored_chain(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    operation = {"type": "create_file", "path": "a.txt", "diff": "+hi\n"}
    scripted.add_turns(
        [
            tool_call("shell", {"commands": ["ls"]}, call_id="call_s"),
            tool_call("apply_patch", operation, call_id="call_p"),
        ],
        "Done.",
    )
    first = await client.responses.create(
        model=backend.model, input="x", tools=[SHELL, APPLY_PATCH]
    )
    outputs = [
        {
            "type": "shell_call_output",
            "call_id": "call_s",
            "output": [
                {"stdout": "a.txt\n", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}},
                {"stdout": "", "stderr": "slow", "outcome": {"type": "timeout"}},
            ],
        },
        {"type": "apply_patch_call_output", "call_id": "call_p", "status": "failed", "output": "x"},
    ]

    second = await client.responses.create(
        model=backend.model,
        previous_response_id=first.id,
        input=cast("list[ResponseInputItemParam]", outputs),
        tools=[SHELL, APPLY_PATCH],
    )

    assert second.output_text == "Done."
    assistant, shell, patch = sent(backend)["messages"][-3:]
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["shell", "apply_patch"]
    assert shell["tool_call_id"] == "call_s"
    assert "[command 1: exit code 0]\nstdout:\na.txt\n" in shell["content"]
    assert "[command 2: timed out]\nstderr:\nslow" in shell["content"]
    assert patch == {"role": "tool", "content": "apply_patch failed: x", "tool_call_id": "call_p"}
    listed = (await client.responses.input_items.list(second.id, order="asc")).data
    assert [(i.type, i.id[:4]) for i in listed] == [
        ("shell_call_output", "sho_"),
        ("apply_patch_call_output", "apco"),
    ]


async def test_stateless_replay_of_a_local_shell_call(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    """The history sent again (``store: false``), the output naming its call by ``call_id``."""
    scripted.add_turn("Listed.")
    call = {
        "type": "local_shell_call",
        "id": "lsh_1",
        "call_id": "call_l",
        "status": "completed",
        "action": {"type": "exec", "command": ["ls"], "env": {}},
    }
    output = {"type": "local_shell_call_output", "call_id": "call_l", "output": "a.txt"}

    response = await client.responses.create(
        model=backend.model,
        input=cast(
            "list[ResponseInputItemParam]", [{"role": "user", "content": "x"}, call, output]
        ),
        tools=[LOCAL_SHELL],
        store=False,
    )

    assert response.output_text == "Listed."
    assistant, tool = sent(backend)["messages"][1:]
    (replayed,) = assistant["tool_calls"]
    assert replayed["function"] == {
        "name": "local_shell",
        "arguments": '{"command": ["ls"], "env": {}}',
    }
    assert tool == {"role": "tool", "content": "a.txt", "tool_call_id": "call_l"}


async def test_tool_choice_names_the_shell(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("shell", {"commands": ["ls"]}))

    await client.responses.create(
        model=backend.model,
        input="x",
        tools=[SHELL, APPLY_PATCH],
        tool_choice=cast("Any", {"type": "shell"}),
    )

    assert sent(backend)["tool_choice"] == {"type": "function", "function": {"name": "shell"}}
    assert [t["function"]["name"] for t in sent(backend)["tools"]] == ["shell"]


@pytest.mark.parametrize(
    ("tools", "param"),
    [
        (
            [{"type": "shell", "environment": {"type": "container_auto"}}],
            "tools[0].environment.type",
        ),
        ([{"type": "shell"}, {"type": "function", "name": "shell"}], "tools[1].name"),
    ],
    ids=["hosted-container", "name-taken"],
)
async def test_refused(
    client: openai.AsyncOpenAI, backend: FakeBackend, tools: list[Any], param: str
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model=backend.model, input="x", tools=tools)

    assert caught.value.param == param  # type: ignore[attr-defined]
