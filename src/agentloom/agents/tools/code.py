"""``code_interpreter`` for agents: Python run in the server's sandbox
(:mod:`agentloom.tools.sandbox`), in process, with the ``[code_interpreter]`` settings.

Each session has its own working directory, ``<data_dir>/code/<session>`` (the session of the
call's context, else the one the tool was built for), seen as ``/mnt/data`` inside the bwrap
sandbox, so files written there stay for the session's later calls. The model is told the exit
status, stdout and stderr (cut to ``model_output_chars``) and the files the directory holds.
Building the tool fails with :class:`~agentloom.errors.InvalidRequestError` when the configured
sandbox cannot run here (bubblewrap missing and the ``subprocess`` fallback not chosen).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

from agentloom.agents.base import AgentContext
from agentloom.agents.tools.base import Tool, ToolError
from agentloom.config import CodeInterpreterSettings
from agentloom.errors import AgentloomError, InvalidRequestError
from agentloom.json_types import JSONObject
from agentloom.tools.code_interpreter import CodeRunner, code_runner, tell_model
from agentloom.tools.sandbox import Sandbox, SandboxUnavailableError

__all__ = ["CodeInterpreterTool", "SessionFolders", "code_interpreter_tool"]

_SAFE = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


class SessionFolders:
    """The working directories of sessions, one folder each under ``root``: the
    :class:`~agentloom.tools.code_interpreter.ContainerHost` of agent code runs."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def folder(self, session_id: str) -> Path:
        """The session's folder; ids that are not plain names are hashed into one."""
        if _SAFE.fullmatch(session_id) and session_id not in (".", ".."):
            return self.root / session_id
        return self.root / ("s_" + hashlib.sha256(session_id.encode()).hexdigest()[:32])

    async def require_files(self, file_ids: Sequence[str], *, param: str) -> None:
        if file_ids:
            raise InvalidRequestError(
                "an agent's code_interpreter takes no uploaded files: write them into the "
                "session's folder instead",
                param=param,
            )

    async def open(self, container_id: str, *, param: str) -> Path:
        folder = self.folder(container_id)
        await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
        return folder

    async def create_auto(self, container_id: str, file_ids: Sequence[str]) -> Path:
        await self.require_files(file_ids, param="file_ids")
        return await self.open(container_id, param="container")


class CodeInterpreterTool(Tool):
    """Runs the model's Python program in the sandbox, in the session's folder."""

    name = "code_interpreter"
    description = (
        "Run a Python 3 program in a sandbox without network access and get its stdout, stderr "
        "and exit status. The working directory keeps files written there between calls of "
        "this session. Print what you need to see."
    )
    parameters: JSONObject = {
        "type": "object",
        "properties": {"code": {"type": "string", "description": "The Python 3 program to run."}},
        "required": ["code"],
        "additionalProperties": False,
    }

    def __init__(self, runner: CodeRunner, folders: SessionFolders, session_id: str) -> None:
        self.runner = runner
        self.folders = folders
        self.session_id = session_id
        self._sandbox: Sandbox = runner.build()  # fails now, not at the first call

    async def call(self, arguments: JSONObject, context: AgentContext) -> str:
        code = arguments.get("code")
        if not isinstance(code, str) or not code.strip():
            raise ToolError('give the program to run as {"code": "..."}')
        session = context.session_id or self.session_id
        try:
            workdir = await self.folders.open(session, param="session_id")
            result = await self._sandbox.run(code, workdir=workdir, limits=self.runner.limits)
        except (AgentloomError, SandboxUnavailableError, OSError) as exc:
            raise ToolError(f"the code could not run: {exc}") from None
        return tell_model(result, self.runner)

    def workdir(self, session_id: str | None = None) -> Path:
        """Where the code of ``session_id`` (default: the tool's session) runs."""
        return self.folders.folder(session_id or self.session_id)


def code_interpreter_tool(
    settings: CodeInterpreterSettings, data_dir: Path, session_id: str = "default"
) -> CodeInterpreterTool:
    """The tool the ``[code_interpreter]`` settings describe, its folders under ``data_dir``."""
    folders = SessionFolders(data_dir / "code")
    return CodeInterpreterTool(code_runner(settings, folders), folders, session_id)
