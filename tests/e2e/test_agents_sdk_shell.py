"""The Agents SDK's ``ShellTool`` and ``ApplyPatchTool`` run by an agent whose model agentloom
serves: the calls come back as ``shell_call`` / ``apply_patch_call`` items the SDK runs, and its
outputs go back to the backend as tool results."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest
from agents import (
    Agent,
    ApplyPatchTool,
    OpenAIResponsesModel,
    Runner,
    ShellTool,
    set_tracing_disabled,
)
from agents.apply_diff import apply_diff
from agents.editor import ApplyPatchOperation, ApplyPatchResult
from agents.tool import ShellCallOutcome, ShellCommandOutput, ShellCommandRequest, ShellResult

from agentloom.inference.scripted import ScriptedModel, text, tool_call
from agentloom.testing.backend import FakeBackend
from tests.e2e.support import received

DIFF = "@@\n-hello\n+hello, world\n"


@pytest.fixture(autouse=True)
def _no_tracing() -> None:
    set_tracing_disabled(True)  # nothing goes to OpenAI's tracing endpoint


class Files:
    """An in-memory tree the SDK's shell and editor work on."""

    def __init__(self) -> None:
        self.files = {"README.md": "hello\n"}
        self.commands: list[list[str]] = []

    def run(self, request: ShellCommandRequest) -> ShellResult:
        self.commands.append(request.data.action.commands)
        exit_ok = ShellCallOutcome(type="exit", exit_code=0)
        listing = "\n".join(sorted(self.files)) + "\n"
        return ShellResult(output=[ShellCommandOutput(stdout=listing, outcome=exit_ok)])

    def create_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        self.files[operation.path] = apply_diff("", operation.diff or "", mode="create")
        return ApplyPatchResult(output=f"created {operation.path}")

    def update_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        path = operation.path
        self.files[path] = apply_diff(self.files[path], operation.diff or "")
        return ApplyPatchResult(output=f"updated {path}")

    def delete_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        del self.files[operation.path]
        return ApplyPatchResult(output=f"deleted {operation.path}")


@pytest.fixture
def files() -> Files:
    return Files()


@pytest.fixture
async def agent(live_url: str, backend: FakeBackend, files: Files) -> AsyncIterator[Agent[Any]]:
    async with openai.AsyncOpenAI(base_url=live_url, api_key="unused", max_retries=0) as sdk:
        yield Agent(
            name="editor",
            instructions="Edit the project with the shell and apply_patch.",
            model=OpenAIResponsesModel(model=backend.model, openai_client=sdk),
            tools=[ShellTool(executor=files.run), ApplyPatchTool(editor=files)],
        )


def _script(scripted: ScriptedModel) -> None:
    scripted.add_turn(tool_call("shell", {"commands": ["ls"]}, "call_ls"))
    update = {"type": "update_file", "path": "README.md", "diff": DIFF}
    scripted.add_turn(tool_call("apply_patch", update, "call_up"))
    scripted.add_turn(text("README.md now greets the world.", chunk_size=5))


def _assert_backend_saw_the_outputs(backend: FakeBackend) -> None:
    first, second, third = received(backend)
    assert [t["function"]["name"] for t in first["tools"]] == ["shell", "apply_patch"]
    shell = second["messages"][-1]
    assert (shell["role"], shell["tool_call_id"]) == ("tool", "call_ls")
    assert "stdout:\nREADME.md\n" in shell["content"]
    assert "exit code 0" in shell["content"]
    patch = third["messages"][-1]
    assert patch == {
        "role": "tool",
        "content": "apply_patch completed: updated README.md",
        "tool_call_id": "call_up",
    }


async def test_runner_runs_the_shell_and_applies_the_patch(
    scripted: ScriptedModel, backend: FakeBackend, agent: Agent[Any], files: Files
) -> None:
    _script(scripted)

    result = await Runner.run(agent, "Make README.md greet the world.")

    assert result.final_output == "README.md now greets the world."
    assert files.commands == [["ls"]]
    assert files.files == {"README.md": "hello, world\n"}
    _assert_backend_saw_the_outputs(backend)
    kinds = [item.type for item in result.new_items]
    assert kinds == [
        "tool_call_item",
        "tool_call_output_item",
        "tool_call_item",
        "tool_call_output_item",
        "message_output_item",
    ]


async def test_streamed_run_sees_the_calls_as_they_come(
    scripted: ScriptedModel, backend: FakeBackend, agent: Agent[Any], files: Files
) -> None:
    _script(scripted)

    result = Runner.run_streamed(agent, "Make README.md greet the world.")
    raw = [e.data.type async for e in result.stream_events() if e.type == "raw_response_event"]

    assert result.final_output == "README.md now greets the world."
    assert files.files == {"README.md": "hello, world\n"}
    assert "response.shell_call_command.done" in raw
    assert raw.count("response.completed") == 3
    _assert_backend_saw_the_outputs(backend)
