"""file_read, think, memory_store / memory_search, and the simple agent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentloom.agents import (
    AGENTS,
    TOOLS,
    AgentContext,
    AgentOptions,
    SimpleAgent,
    ToolEnvironment,
    ToolError,
    build_agent,
    build_tools,
)
from agentloom.agents.memory import MemoryStore
from agentloom.agents.tools.files import FileReadTool
from agentloom.agents.tools.memory import MemorySearchTool, MemoryStoreTool
from agentloom.agents.tools.think import ThinkTool
from agentloom.errors import InvalidRequestError
from agentloom.inference.scripted import ScriptedModel, reasoning
from agentloom.llm import LLM


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "notes.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    (root / "blob.bin").write_bytes(b"\x00\x01\x02")
    (tmp_path / "secret.txt").write_text("top secret")
    return root


async def read(tool: FileReadTool, **arguments: object) -> str:
    return await tool.call(dict(arguments), AgentContext())  # type: ignore[arg-type]


async def test_file_read_reads_inside_the_workspace(workspace: Path) -> None:
    tool = FileReadTool(workspace)

    assert await read(tool, path="docs/notes.txt", limit=2) == (
        "line 1\nline 2\n[lines 1-2 of 10; read on with offset=3]"
    )
    assert await read(tool, path="docs/notes.txt", offset=9) == "line 9\nline 10\n"
    absolute = str(workspace / "docs" / "notes.txt")
    assert (await read(tool, path=absolute, limit=1)).startswith("line 1")


@pytest.mark.parametrize("escape", ["../secret.txt", "docs/../../secret.txt", "SECRET_ABSOLUTE"])
async def test_file_read_refuses_paths_outside_the_workspace(workspace: Path, escape: str) -> None:
    path = str(workspace.parent / "secret.txt") if escape == "SECRET_ABSOLUTE" else escape

    with pytest.raises(ToolError, match="outside the workspace"):
        await read(FileReadTool(workspace), path=path)


async def test_file_read_refuses_a_symlink_leading_out(workspace: Path) -> None:
    os.symlink(workspace.parent / "secret.txt", workspace / "innocent.txt")
    os.symlink(workspace.parent, workspace / "up")

    tool = FileReadTool(workspace)
    with pytest.raises(ToolError, match="outside the workspace"):
        await read(tool, path="innocent.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        await read(tool, path="up/secret.txt")


async def test_file_read_refuses_big_binary_missing_and_directories(workspace: Path) -> None:
    tool = FileReadTool(workspace, max_bytes=40)

    with pytest.raises(ToolError, match="limit is 40"):
        await read(tool, path="docs/notes.txt")
    with pytest.raises(ToolError, match="binary"):
        await read(tool, path="blob.bin")
    with pytest.raises(ToolError, match="no such file"):
        await read(tool, path="nope.txt")
    with pytest.raises(ToolError, match=r"directory; it contains: notes\.txt"):
        await read(tool, path="docs")
    with pytest.raises(ToolError, match="offset must be a positive integer"):
        await read(tool, path="blob.bin", offset=0)


async def test_file_read_uses_the_runs_workspace_first(workspace: Path, tmp_path: Path) -> None:
    tool = FileReadTool(tmp_path / "elsewhere")

    text = await tool.call(
        {"path": "docs/notes.txt", "limit": 1}, AgentContext(workspace=workspace)
    )

    assert text.startswith("line 1\n")


async def test_think_records_the_thought() -> None:
    tool = ThinkTool()

    assert await tool.call({"thought": "check the units"}, AgentContext()) == "ok"
    assert tool.thoughts == ["check the units"]
    with pytest.raises(ToolError):
        await tool.call({"thought": ""}, AgentContext())


async def test_memory_persists_across_store_instances(tmp_path: Path) -> None:
    path = tmp_path / "data" / "memory.db"
    first = MemoryStore(path)
    await first.store("alice", "Alice prefers window seats on long flights.")
    await first.store("alice", "Alice's cat is called Miso.")
    await first.store("bob", "Bob prefers aisle seats.")

    second = MemoryStore(path)  # as a new process would open it
    hits = await second.search("alice", "which seats does she prefer?")
    recent = await second.recent("alice")

    assert [h.memory.content for h in hits] == ["Alice prefers window seats on long flights."]
    assert [m.content for m in recent] == [
        "Alice's cat is called Miso.",
        "Alice prefers window seats on long flights.",
    ]
    assert await second.search("carol", "seats") == []


async def test_memory_search_ranks_by_shared_rare_keywords(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory.db")
    for note in ["project deadline is Friday", "project budget is 10k", "budget review Friday"]:
        await store.store("s", note)

    hits = await store.search("s", "project budget", limit=2)

    assert [h.memory.content for h in hits] == ["project budget is 10k", "budget review Friday"]
    assert hits[0].score > hits[1].score


async def test_memory_tools_are_namespaced_by_session(tmp_path: Path) -> None:
    environment = ToolEnvironment(workspace=tmp_path, data_dir=tmp_path / "data", session_id="s1")
    store, search = build_tools(["memory_store", "memory_search"], environment)
    assert isinstance(store, MemoryStoreTool)
    assert isinstance(search, MemorySearchTool)

    assert await store.call({"content": "The launch code is 1234."}, AgentContext()) == (
        "remembered (memory 1)"
    )
    other = AgentContext(session_id="s2")
    await store.call({"content": "Another session's launch note."}, other)

    found = await search.call({"query": "launch code"}, AgentContext())
    assert found.endswith("] The launch code is 1234.")
    assert "Another" not in found
    assert await search.call({"query": "weather"}, AgentContext()) == "no remembered notes match"
    assert (tmp_path / "data" / "memory.db").exists()
    with pytest.raises(ToolError, match="limit"):
        await search.call({"query": "x", "limit": 0}, AgentContext())


async def test_simple_agent_makes_one_call_without_tools() -> None:
    model = ScriptedModel([[reasoning("hmm"), "Hello there."]])
    agent = SimpleAgent(LLM("m", provider=model), instructions="Be kind.")

    events = [event.type async for event in agent.stream("hi")]
    result = await SimpleAgent(LLM("m", provider=ScriptedModel(["Hi again."]))).run("hi")

    assert events == ["turn_started", "reasoning_delta", "text_delta", "agent_finished"]
    assert model.requests[0].tools == ()
    assert [m.role for m in model.requests[0].messages] == ["system", "user"]
    assert result.content == "Hi again."
    assert (result.turns, result.usage.model_calls, result.stop_reason) == (1, 1, "final")


def test_the_registry_builds_every_strategy_and_tool(tmp_path: Path) -> None:
    llm = LLM("m", provider=ScriptedModel())
    environment = ToolEnvironment(workspace=tmp_path, data_dir=tmp_path)
    mine = ["calculator", "think", "file_read", "memory_store", "memory_search"]

    tools = build_tools(mine, environment)
    agents = {
        name: build_agent(name, llm, tools if name != "simple" else (), AgentOptions(max_turns=3))
        for name in ["simple", "orchestrator", "structured", "react"]
    }

    assert [tool.name for tool in tools] == mine
    assert set(mine) <= set(TOOLS)
    assert {"simple", "orchestrator", "structured", "react"} <= set(AGENTS)
    assert [type(a).__name__ for a in agents.values()] == [
        "SimpleAgent", "OrchestratorAgent", "OrchestratorAgent", "ReactAgent",
    ]  # fmt: skip
    with pytest.raises(InvalidRequestError, match="no tools"):
        build_agent("simple", llm, tools)
