"""``claude_code``: a task run by Claude Code, through the Claude Agent SDK on Node.

Claude Code brings its own tools (read, edit, run commands ...) and its own model calls; this
agent starts ``node`` on the runner shipped beside this module (``claude_code_runner.mjs``),
hands it the task on stdin and turns what it reports, one JSON line at a time, into agent events.

The runtime is optional: Node.js on ``PATH`` and the SDK installed with npm into a prefix
(default ``<data_dir>/claude_code``)::

    npm install --prefix ~/.agentloom/claude_code @anthropic-ai/claude-agent-sdk

Without them, making the agent is an ``InvalidRequestError`` saying so. The model is the LLM's
model name (a Claude model); the API key and base URL (Anthropic's, or a compatible endpoint's)
are given to the agent, or read from ``ANTHROPIC_API_KEY`` / ``ANTHROPIC_BASE_URL`` when it is
made from the table. They travel in the request on the runner's stdin: the runner's own
environment is only ``PATH``, ``HOME`` and the locale.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import tempfile
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import IO, Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from agentloom.agents.base import (
    AgentContext,
    AgentEvent,
    AgentFinished,
    AgentInput,
    AgentResult,
    AgentUsage,
    BaseAgent,
    StopReason,
    TextDelta,
    ToolFinished,
    ToolOutcome,
    ToolStarted,
    TurnStarted,
    memory_section,
)
from agentloom.errors import InvalidRequestError, UpstreamError, UpstreamTimeoutError
from agentloom.frozen import frozen
from agentloom.json_types import JSONValue
from agentloom.llm.client import LLM
from agentloom.llm.types import MessageToolCall

__all__ = ["SDK_PACKAGE", "ClaudeCodeAgent", "ClaudeCodeRuntime"]

SDK_PACKAGE = "@anthropic-ai/claude-agent-sdk"
LINE_BYTES = 64 << 20  # the longest line the runner may send (a tool result)
PermissionMode = Literal["default", "acceptEdits", "bypassPermissions", "plan"]


@frozen
class ClaudeCodeRuntime:
    """Node and the npm prefix holding the SDK."""

    node: str
    prefix: Path

    @classmethod
    def find(cls, prefix: Path, node: str | None = None) -> ClaudeCodeRuntime:
        """The runtime, or ``InvalidRequestError`` naming what to install."""
        found = node or shutil.which("node")
        installed = (prefix / "node_modules" / SDK_PACKAGE / "package.json").is_file()
        install = f"`npm install --prefix {prefix} {SDK_PACKAGE}`"
        if found is None:
            raise InvalidRequestError(
                "the claude_code agent needs Node.js (18 or later) and the Claude Agent SDK: "
                f"install Node.js, then run {install}"
            )
        if not installed:
            raise InvalidRequestError(
                f"the claude_code agent needs the Claude Agent SDK, not found in {prefix}: "
                f"run {install}"
            )
        return cls(found, prefix)

    def runner(self) -> Path:
        return Path(str(resources.files("agentloom.agents").joinpath("claude_code_runner.mjs")))


# --- what the runner sends -------------------------------------------------------------------


class _Turn(BaseModel):
    type: Literal["turn"]


class _Text(BaseModel):
    type: Literal["text"]
    text: str


class _ToolUse(BaseModel):
    type: Literal["tool_use"]
    id: str
    name: str
    input: Any = None


class _ToolResult(BaseModel):
    type: Literal["tool_result"]
    id: str
    content: str = ""
    is_error: bool = False


class _Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0


class _Result(BaseModel):
    type: Literal["result"]
    subtype: str = "success"
    text: str = ""
    is_error: bool = False
    num_turns: int = 0
    session_id: str | None = None
    cost_usd: float | None = None
    usage: _Usage = _Usage()


class _Error(BaseModel):
    type: Literal["error"]
    message: str


_Line = Annotated[
    _Turn | _Text | _ToolUse | _ToolResult | _Result | _Error, Field(discriminator="type")
]
_LINE: TypeAdapter[_Line] = TypeAdapter(_Line)


@dataclass
class _Transcript:
    """The run so far, turned into events line by line."""

    turns: int = 0
    last_text: str = ""
    calls: dict[str, MessageToolCall] = field(default_factory=dict)
    outcomes: list[ToolOutcome] = field(default_factory=list)

    def events(self, line: _Line) -> list[AgentEvent]:
        if isinstance(line, _Turn):
            self.turns += 1
            return [TurnStarted(self.turns)]
        if isinstance(line, _Text):
            self.last_text = line.text
            return [TextDelta(line.text)]
        if isinstance(line, _ToolUse):
            call = MessageToolCall(line.id, line.name, json.dumps(line.input or {}))
            self.calls[line.id] = call
            return [ToolStarted(call)]
        if isinstance(line, _ToolResult):
            return [ToolFinished(self._outcome(line))]
        if isinstance(line, _Result):
            return [AgentFinished(self._result(line))]
        raise UpstreamError(f"Claude Code failed: {line.message}")

    def _outcome(self, line: _ToolResult) -> ToolOutcome:
        call = self.calls.get(line.id, MessageToolCall(line.id, "unknown"))
        outcome = ToolOutcome(line.id, call.name, call.arguments, line.content, line.is_error)
        self.outcomes.append(outcome)
        return outcome

    def _result(self, line: _Result) -> AgentResult:
        usage = AgentUsage(
            input_tokens=line.usage.input_tokens,
            output_tokens=line.usage.output_tokens,
            cached_tokens=line.usage.cache_read_input_tokens,
            model_calls=line.num_turns,
        )
        metadata: dict[str, JSONValue] = {"runtime": "claude_code", "subtype": line.subtype}
        metadata |= {"session_id": line.session_id, "cost_usd": line.cost_usd}
        return AgentResult(
            content=line.text or self.last_text,
            tool_results=tuple(self.outcomes),
            turns=line.num_turns or self.turns,
            usage=usage,
            stop_reason=_stop_reason(line),
            metadata=metadata,
        )


def _stop_reason(line: _Result) -> StopReason:
    if line.subtype == "error_max_turns":
        return "max_turns"
    return "error" if line.is_error else "final"


# --- the agent -------------------------------------------------------------------------------


class ClaudeCodeAgent(BaseAgent):
    """Runs the task with Claude Code (see the module doc).

    ``allowed_tools``: Claude Code tools it may use without asking (default: its own rules);
    ``permission_mode``: Claude Code's (``default`` refuses what would need a person's
    approval). ``workspace``: where it works when the run's context names none (default: the
    current directory). ``timeout``: seconds for the whole run."""

    name = "claude_code"
    description = "Claude Code (Claude Agent SDK on Node): its own tools and model calls."

    def __init__(
        self,
        llm: LLM,
        runtime: ClaudeCodeRuntime,
        *,
        instructions: str | None = None,
        max_turns: int = 30,
        api_key: str | None = None,
        base_url: str | None = None,
        allowed_tools: Sequence[str] = (),
        permission_mode: PermissionMode = "default",
        workspace: Path | None = None,
        timeout: float = 1800.0,
    ) -> None:
        super().__init__(llm, instructions=instructions)
        self.runtime = runtime
        self.max_turns = max_turns
        self._api_key = api_key
        self.base_url = base_url
        self.allowed_tools = tuple(allowed_tools)
        self.permission_mode: PermissionMode = permission_mode
        self.workspace = workspace
        self.timeout = timeout

    async def stream(
        self, input: AgentInput, context: AgentContext | None = None
    ) -> AsyncGenerator[AgentEvent, None]:
        context = context or AgentContext()
        cwd = context.workspace or self.workspace or Path.cwd()
        transcript = _Transcript()
        async with self._runner(cwd) as (process, errors):
            await _send(process, self._request(input, cwd, context))
            async with aclosing(_lines(process, self.timeout)) as lines:
                async for line in lines:
                    for event in transcript.events(line):
                        yield event
                        if isinstance(event, AgentFinished):
                            return
            raise UpstreamError(
                f"Claude Code ended without a result ({_exit(process)}): {_tail(errors)}"
            )

    def _request(self, input: AgentInput, cwd: Path, context: AgentContext) -> dict[str, JSONValue]:
        memory = memory_section(context.memory_results)
        system = "\n\n".join(part for part in (self.instructions, memory) if part) or None
        return {
            "prompt": _prompt(input),
            "sdk_prefix": str(self.runtime.prefix),
            "cwd": str(cwd),
            "model": self.llm.model,
            "system_prompt": system,
            "max_turns": self.max_turns,
            "allowed_tools": list(self.allowed_tools),
            "permission_mode": self.permission_mode,
            "api_key": self._api_key,
            "base_url": self.base_url,
        }

    @asynccontextmanager
    async def _runner(
        self, cwd: Path
    ) -> AsyncIterator[tuple[asyncio.subprocess.Process, IO[bytes]]]:
        """The runner process, its stderr in a scratch file; killed (its group) after."""
        node = Path(self.runtime.node)
        env = {"PATH": f"{node.parent}:/usr/bin:/bin", "LANG": "C.UTF-8"}
        env["HOME"] = os.environ.get("HOME", str(Path.home()))
        with tempfile.TemporaryFile() as errors:
            process = await asyncio.create_subprocess_exec(
                str(node),
                str(self.runtime.runner()),
                cwd=cwd,
                env=env,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=errors,
                start_new_session=True,
                limit=LINE_BYTES,
            )
            try:
                yield process, errors
            finally:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
                await process.wait()


def _prompt(input: AgentInput) -> str:
    """The task: the text, or a conversation's messages as lines (Claude Code takes one
    prompt)."""
    if isinstance(input, str):
        return input
    return "\n\n".join(f"{m.role}: {m.content}" for m in input if m.content)


async def _send(process: asyncio.subprocess.Process, request: dict[str, JSONValue]) -> None:
    assert process.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.write(json.dumps(request).encode() + b"\n")
        await process.stdin.drain()
        process.stdin.close()


async def _lines(
    process: asyncio.subprocess.Process,
    seconds: float,
) -> AsyncGenerator[_Line, None]:
    """The runner's lines, parsed, until it closes its output, within ``seconds`` in all."""
    assert process.stdout is not None
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        try:
            async with asyncio.timeout_at(deadline):
                raw = await process.stdout.readline()
        except TimeoutError:
            raise UpstreamTimeoutError(f"Claude Code did not finish within {seconds:g} s") from None
        except ValueError as exc:
            raise UpstreamError(f"Claude Code's runner sent a line too long: {exc}") from None
        if not raw:
            await process.wait()
            return
        try:
            yield _LINE.validate_json(raw)
        except ValidationError as exc:
            raise UpstreamError(f"Claude Code's runner sent an invalid line: {exc}") from None


def _exit(process: asyncio.subprocess.Process) -> str:
    return f"exit status {process.returncode}"


def _tail(errors: IO[bytes], chars: int = 2000) -> str:
    errors.seek(0)
    return errors.read().decode("utf-8", "replace").strip()[-chars:]
