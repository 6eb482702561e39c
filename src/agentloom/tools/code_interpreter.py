"""``code_interpreter``: the model writes Python, the server runs it in a sandboxed container.

The model is offered one function, ``code_interpreter(code)``. Each call runs the code in the
response's container (a working directory, seen as ``/mnt/data`` inside the bwrap sandbox,
with the request's files copied in) through :mod:`agentloom.tools.sandbox`, streams the call's
events and tells the model the exit status, stdout and stderr (cut to a size) and the files
the directory holds. A sandbox failure fails the item, never the response.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from agentloom.api import events as ev
from agentloom.api.items import CodeInterpreterCall, CodeInterpreterLogs
from agentloom.api.tools import CodeInterpreterAuto, CodeInterpreterTool
from agentloom.config import CodeInterpreterSettings
from agentloom.errors import AgentloomError, InvalidRequestError
from agentloom.frozen import frozen
from agentloom.inference import base as inf
from agentloom.json_types import JSONObject
from agentloom.tools.base import ToolCallContext, ToolResult, ToolStep
from agentloom.tools.containers import new_container_id
from agentloom.tools.items import Replayed, ToolItem
from agentloom.tools.sandbox import (
    Limits,
    RunResult,
    Sandbox,
    SandboxKind,
    SandboxUnavailableError,
    build_sandbox,
    default_packages,
)

NAME = "code_interpreter"
OUTPUTS = "code_interpreter_call.outputs"

_PARAMETERS: JSONObject = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "description": "The Python 3 program to run."},
    },
    "required": ["code"],
    "additionalProperties": False,
}


class ContainerHost(Protocol):
    """Where containers live (the containers service)."""

    async def require_files(self, file_ids: Sequence[str], *, param: str) -> None:
        """NotFoundError naming ``param[i]`` unless every uploaded file exists."""

    async def open(self, container_id: str, *, param: str) -> Path:
        """An existing container's folder, marked active; NotFoundError naming ``param``."""

    async def create_auto(self, container_id: str, file_ids: Sequence[str]) -> Path:
        """A new container holding copies of the uploaded files; its folder."""


@frozen
class CodeRunner:
    """What code_interpreter needs from the server: the sandbox settings, the containers, the
    uploaded files."""

    host: ContainerHost
    sandbox: SandboxKind = "bwrap"
    uid: int = 65534
    python: str = ""
    packages: tuple[Path, ...] = ()  # importable by the code, read-only
    limits: Limits = field(default_factory=Limits)
    model_output_chars: int = 8000

    def build(self) -> Sandbox:
        """The sandbox; InvalidRequestError (400) naming how to install it when missing."""
        try:
            return build_sandbox(
                self.sandbox, uid=self.uid, python=self.python, packages=self.packages
            )
        except SandboxUnavailableError as exc:
            raise InvalidRequestError(str(exc), param="tools", code="sandbox_unavailable") from exc


@dataclass(slots=True)
class CodeInterpreter:
    """One ``code_interpreter`` tool of a request; its calls share one container."""

    config: CodeInterpreterTool
    runner: CodeRunner
    include_outputs: bool  # include: ["code_interpreter_call.outputs"]
    param: str = "tools[0]"
    container_id: str = field(default_factory=new_container_id)
    _created: bool = False  # the auto container exists
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def __post_init__(self) -> None:
        if isinstance(self.config.container, str):
            self.container_id = self.config.container

    @property
    def kind(self) -> str:
        return "code_interpreter"

    @property
    def item_prefix(self) -> str:
        return CodeInterpreterCall.ID_PREFIX

    @property
    def spec(self) -> inf.FunctionSpec:
        return inf.FunctionSpec(
            name=NAME,
            description=(
                "Run a Python 3 program in a sandbox without network access and get its "
                "stdout, stderr and exit status. The working directory /mnt/data holds the "
                "user's files and keeps files written there between calls. Print what you "
                "need to see."
            ),
            parameters=_PARAMETERS,
        )

    async def check(self) -> None:
        self.runner.build()
        container, host = self.config.container, self.runner.host
        if isinstance(container, str):
            await host.open(container, param=f"{self.param}.container")
        else:
            await host.require_files(container.file_ids, param=f"{self.param}.container.file_ids")

    def item(self, context: ToolCallContext, arguments: str) -> CodeInterpreterCall:
        return CodeInterpreterCall(
            id=context.item_id,
            code=parse_code(arguments)[0],
            container_id=self.container_id,
            status="in_progress",
        )

    async def run(self, context: ToolCallContext, arguments: str) -> AsyncIterator[ToolStep]:
        where = {"item_id": context.item_id, "output_index": context.output_index}
        yield ev.CodeInterpreterCallInProgress(sequence_number=context.seq(), **where)
        code, problem = parse_code(arguments)
        yield ev.CodeInterpreterCallCodeDelta(sequence_number=context.seq(), delta=code, **where)
        yield ev.CodeInterpreterCallCodeDone(sequence_number=context.seq(), code=code, **where)
        if problem is not None:
            yield self._failed(context, code, problem)
            return
        yield ev.CodeInterpreterCallInterpreting(sequence_number=context.seq(), **where)
        try:
            result = await self._run(code)
        except (AgentloomError, SandboxUnavailableError, OSError) as exc:
            yield self._failed(context, code, str(exc))
            return
        yield ev.CodeInterpreterCallCompleted(sequence_number=context.seq(), **where)
        yield self._completed(context, code, result)

    async def _run(self, code: str) -> RunResult:
        sandbox = self.runner.build()
        workdir = await self._container()
        return await sandbox.run(code, workdir=workdir, limits=self.runner.limits)

    async def _container(self) -> Path:
        """The container's folder (marked active); an auto container is made, with the
        request's files, on the first call."""
        container, host = self.config.container, self.runner.host
        async with self._lock:
            if isinstance(container, CodeInterpreterAuto) and not self._created:
                self._created = True
                return await host.create_auto(self.container_id, container.file_ids)
        return await host.open(self.container_id, param=f"{self.param}.container")

    def _completed(self, context: ToolCallContext, code: str, result: RunResult) -> ToolResult:
        outputs = None
        if self.include_outputs:
            outputs = [CodeInterpreterLogs(logs=result.stdout + result.stderr)]
        item = CodeInterpreterCall(
            id=context.item_id,
            code=code,
            container_id=self.container_id,
            status="completed",
            outputs=outputs,
        )
        return ToolResult(item=item, output=tell_model(result, self.runner))

    def _failed(self, context: ToolCallContext, code: str, why: str) -> ToolResult:
        item = CodeInterpreterCall(
            id=context.item_id, code=code, container_id=self.container_id, status="failed"
        )
        return ToolResult(item=item, output=f"Error: the code could not run: {why}")


def parse_code(arguments: str) -> tuple[str, str | None]:
    """The code of a call's arguments, and what is wrong with them (``None``: nothing).

    Arguments that are not a JSON object are taken as the code itself: small models send the
    bare program."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        return arguments, None
    if isinstance(value, dict):
        value = value.get("code", value.get("input"))
    if not isinstance(value, str) or not value.strip():
        return "", 'give the program to run as {"code": "..."}'
    return value, None


def tell_model(result: RunResult, runner: CodeRunner) -> str:
    """The tool message: how the run ended, its output (cut) and the container's files."""
    chars = runner.model_output_chars
    parts = [_ending(result, runner.limits)]
    if result.stdout:
        parts.append(f"stdout:\n{_cut(result.stdout, chars)}")
    if result.stderr:
        parts.append(f"stderr:\n{_cut(result.stderr, chars)}")
    if result.files:
        parts.append("Files in /mnt/data: " + ", ".join(_first(result.files, 50)))
    return "\n\n".join(parts)


def _ending(result: RunResult, limits: Limits) -> str:
    if result.timed_out:
        return f"Killed: the program ran past the {limits.wall_seconds:g} s time limit."
    if result.truncated:
        return f"Killed: the program printed more than {limits.output_bytes} bytes."
    if result.exit_code is not None and result.exit_code < 0:
        return (
            f"Killed by signal {-result.exit_code} (a CPU, memory or file-size limit may "
            "have been reached)."
        )
    return f"Exit status: {result.exit_code}"


def _cut(text: str, chars: int) -> str:
    if len(text) <= chars:
        return text
    half = chars // 2
    return f"{text[:half]}\n... [{len(text) - 2 * half} characters cut] ...\n{text[-half:]}"


def _first(names: Sequence[str], count: int) -> list[str]:
    more = len(names) - count
    return [*names[:count], f"... and {more} more"] if more > 0 else list(names)


def _packages(settings: CodeInterpreterSettings) -> tuple[Path, ...]:
    if settings.packages is None:
        return default_packages(settings.python)
    return tuple(settings.packages)


def code_runner(settings: CodeInterpreterSettings, host: ContainerHost) -> CodeRunner:
    """The runner the ``[code_interpreter]`` settings describe."""
    limits = Limits(
        wall_seconds=settings.wall_seconds,
        cpu_seconds=settings.cpu_seconds,
        memory_bytes=settings.memory_mb << 20,
        processes=settings.processes,
        file_bytes=settings.file_mb << 20,
        output_bytes=settings.output_kb << 10,
    )
    return CodeRunner(
        host=host,
        sandbox=settings.sandbox,
        uid=settings.uid,
        python=settings.python,
        packages=_packages(settings),
        limits=limits,
        model_output_chars=settings.model_output_chars,
    )


# --- the item ----------------------------------------------------------------------------------


def _replayed(item: CodeInterpreterCall) -> Replayed:
    """Code the server ran: the call, and its logs when they were kept (``include:
    ["code_interpreter_call.outputs"]``)."""
    arguments = json.dumps({"code": item.code or ""})
    logs = [o.logs for o in item.outputs or [] if isinstance(o, CodeInterpreterLogs)]
    kept = item.outputs is not None
    output = "\n".join(logs) if kept else f"(run {item.status}; its output was not kept)"
    return Replayed(inf.ToolCall(id=item.id, name=NAME, arguments=arguments), output)


def _line(item: CodeInterpreterCall) -> str:
    logs = " ".join(o.logs for o in item.outputs or [] if isinstance(o, CodeInterpreterLogs))
    return f"PYTHON RUN ({item.status}): {item.code}\n{logs}".rstrip()


def _redacted(item: CodeInterpreterCall, notice: str) -> CodeInterpreterCall:
    outputs = [
        CodeInterpreterLogs(logs=notice) if isinstance(out, CodeInterpreterLogs) else out
        for out in item.outputs or ()
    ]
    return item.model_copy(update={"outputs": outputs if item.outputs is not None else None})


ITEM = ToolItem(CodeInterpreterCall, replayed=_replayed, line=_line, redacted=_redacted)
