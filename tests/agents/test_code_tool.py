"""The agents' code_interpreter tool in the real sandbox (bubblewrap), one folder a session."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentloom.agents.base import AgentContext
from agentloom.agents.builders import ToolEnvironment, build_tools
from agentloom.agents.tools.base import ToolError
from agentloom.agents.tools.code import CodeInterpreterTool, SessionFolders, code_interpreter_tool
from agentloom.config import CodeInterpreterSettings, Settings
from agentloom.errors import InvalidRequestError

pytestmark = pytest.mark.usefixtures("requires_sandbox")

SETTINGS = CodeInterpreterSettings(wall_seconds=20)


def _tool(data_dir: Path, session: str = "s1") -> CodeInterpreterTool:
    return code_interpreter_tool(SETTINGS, data_dir, session)


async def test_the_code_runs_and_its_files_stay_for_the_session(tmp_path: Path) -> None:
    tool = _tool(tmp_path)
    context = AgentContext()

    first = await tool.call(
        {"code": "open('notes.txt', 'w').write('forty-two')\nprint('wrote', 6 * 7)"}, context
    )
    second = await tool.call({"code": "print(open('notes.txt').read().upper())"}, context)

    assert first.startswith("Exit status: 0")
    assert "stdout:\nwrote 42" in first
    assert "Files in /mnt/data: notes.txt" in first
    assert "stdout:\nFORTY-TWO" in second
    assert (tmp_path / "code" / "s1" / "notes.txt").read_text() == "forty-two"


async def test_the_context_session_chooses_the_folder(tmp_path: Path) -> None:
    tool = _tool(tmp_path)
    await tool.call({"code": "open('mine.txt', 'w').write('a')"}, AgentContext(session_id="s1"))

    told = await tool.call(
        {"code": "import os; print(sorted(os.listdir('.')))"}, AgentContext(session_id="other/..")
    )

    assert "stdout:\n[]" in told
    assert tool.workdir("other/..").parent == tmp_path / "code"  # hashed into a plain name
    assert tool.workdir("other/..").name.startswith("s_")


async def test_errors_and_stderr_are_reported(tmp_path: Path) -> None:
    tool = _tool(tmp_path)

    told = await tool.call({"code": "import sys\nprint('half')\nsys.exit('boom')"}, AgentContext())

    assert told.startswith("Exit status: 1")
    assert "stdout:\nhalf" in told
    assert "stderr:\nboom" in told
    with pytest.raises(ToolError, match="give the program"):
        await tool.call({"code": ""}, AgentContext())


async def test_the_sandbox_has_no_network(tmp_path: Path) -> None:
    tool = _tool(tmp_path)

    told = await tool.call(
        {"code": "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=2)"},
        AgentContext(),
    )

    assert told.startswith("Exit status: 1")
    assert "OSError" in told or "Network is unreachable" in told


def test_the_registry_builds_it_under_the_data_dir(tmp_path: Path) -> None:
    env = ToolEnvironment(data_dir=tmp_path, settings=Settings(), session_id="abc")
    (tool,) = build_tools(["code_interpreter"], env)

    assert isinstance(tool, CodeInterpreterTool)
    assert tool.workdir() == tmp_path / "code" / "abc"


async def test_the_session_folders_take_no_uploaded_files(tmp_path: Path) -> None:
    with pytest.raises(InvalidRequestError, match="no uploaded files"):
        await SessionFolders(tmp_path).create_auto("s", ["file_1"])
