"""The REPL's child process: how it is started in the sandbox, and its JSON-lines channel."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import stat
import sys
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TypeAlias

from agentloom.json_types import JSONValue
from agentloom.tools.sandbox import (
    Sandbox,
    SandboxCommand,
    SubprocessSandbox,
    build_sandbox,
    bwrap_available,
    default_packages,
    spawn,
)

__all__ = [
    "MESSAGE_BYTES",
    "BrokenChannel",
    "Child",
    "Message",
    "child_source",
    "default_sandbox",
    "run_nested",
]

Message: TypeAlias = dict[str, JSONValue]
MESSAGE_BYTES = 256 << 20  # the longest line the child may send (a FINAL value, a call)


class BrokenChannel(Exception):
    """The child sent something that is not a protocol message."""


@cache
def child_source() -> str:
    return resources.files("agentloom.agents").joinpath("_repl_child.py").read_text("utf-8")


SYSTEM_PYTHON = "/usr/bin/python3"
_nested: Sandbox | None = None  # set by run_nested()


def run_nested() -> None:
    """From now on this process's REPLs run with the resource limits only: for a process that
    an outer sandbox already isolates (a sandboxed agent's child), inside which bubblewrap
    cannot run again."""
    global _nested
    _nested = SubprocessSandbox()


def default_sandbox() -> Sandbox:
    """bubblewrap where installed, else the subprocess fallback; the venv's packages visible.

    Without bubblewrap, as root, the code runs as an unprivileged user, who may not be able to
    run the server's interpreter (say, under ``/root``): the system's Python is used then (the
    REPL itself needs only the standard library). Inside an outer sandbox (:func:`run_nested`),
    the subprocess fallback, always."""
    if _nested is not None:
        return _nested
    python = ""
    if not bwrap_available() and os.geteuid() == 0 and not _others_may_run(sys.executable):
        python = SYSTEM_PYTHON if Path(SYSTEM_PYTHON).exists() else ""
    return build_sandbox("subprocess", python=python, packages=default_packages(python))


def _others_may_run(executable: str) -> bool:
    """Whether any user may run ``executable``: every folder above it searchable by others,
    the file itself executable by others."""
    path = Path(os.path.realpath(executable))
    try:
        if not path.stat().st_mode & stat.S_IXOTH:
            return False
        return all(parent.stat().st_mode & stat.S_IXOTH for parent in path.parents)
    except OSError:
        return False


class Child:
    """One running child process and its JSON-lines channel."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def spawn(cls, command: SandboxCommand) -> Child:
        return cls(await spawn(command, limit=MESSAGE_BYTES))

    async def send(self, message: Message) -> None:
        """Write one message; a dead child is noticed by the next :meth:`receive`."""
        stdin = self.process.stdin
        assert stdin is not None
        data = json.dumps(message).encode() + b"\n"
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            stdin.write(data)
            await stdin.drain()

    async def receive(self) -> Message | None:
        """The next message; ``None`` when the child has closed its end (it died)."""
        stdout = self.process.stdout
        assert stdout is not None
        try:
            line = await stdout.readline()
        except ValueError as exc:  # the line passed MESSAGE_BYTES
            raise BrokenChannel(f"a message longer than {MESSAGE_BYTES} bytes") from exc
        if not line:
            return None
        try:
            message = json.loads(line)
        except ValueError as exc:
            raise BrokenChannel("a line that is not JSON") from exc
        if not isinstance(message, dict) or not isinstance(message.get("op"), str):
            raise BrokenChannel("a message without an op")
        return message

    async def kill(self) -> str:
        """Kill the process group, reap it; what it wrote to stderr (bwrap, a failed start)."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        await self.process.wait()
        assert self.process.stderr is not None
        stderr = await self.process.stderr.read()
        return stderr.decode("utf-8", "replace")[-4000:]

    def describe_exit(self) -> str:
        code = self.process.returncode
        if code is not None and code < 0:
            return f"killed by {signal.Signals(-code).name}"
        if code is not None and 128 < code <= 128 + 64:  # bwrap's way to say "signal N"
            return f"killed by {signal.Signals(code - 128).name}"
        return f"exit status {code}"
