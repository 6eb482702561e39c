"""A persistent Python REPL in the code sandbox, for the code-writing strategies.

:class:`Repl` keeps one Python process alive between executions, so variables and imports
persist. The process runs inside the code_interpreter sandbox (:mod:`agentloom.tools.sandbox`:
bubblewrap where installed, else the rlimits-only subprocess) and speaks JSON lines over its
stdin and stdout (see :mod:`agentloom.agents._repl_child`); what the code prints is captured
per execution, never mixed into the channel.

The code may call **host functions** (``Repl(callbacks={"llm_query": fn})``): async Python
functions of this process taking and returning JSON values. The child blocks until the host
replies; a host function that raises :class:`CallbackError` (or any
:class:`~agentloom.errors.AgentloomError`) makes the call raise ``HostError`` in the code.
``FINAL(value)`` inside the code sets the result's ``final``.

A timeout kills the process (its whole group) and the next execution starts a fresh one: the
result says the state was lost. Variables set by the host (:meth:`Repl.set_variable`) are set
again in the new process.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import TypeAlias

from agentloom.agents._repl_process import (
    BrokenChannel,
    Child,
    Message,
    child_source,
    default_sandbox,
)
from agentloom.errors import AgentloomError
from agentloom.frozen import frozen
from agentloom.json_types import JSONValue
from agentloom.tools.sandbox import Limits, Sandbox, SandboxKind, SandboxUnavailableError

__all__ = ["REPL_LIMITS", "CallbackError", "HostFunction", "Repl", "ReplResult"]

HostFunction: TypeAlias = Callable[..., Awaitable[JSONValue]]

# A long-lived process: the CPU limit counts its whole life, the wall limit one execution.
REPL_LIMITS = Limits(wall_seconds=60.0, cpu_seconds=900, memory_bytes=2 << 30)


class CallbackError(Exception):
    """Raised by a host function: the code's call raises ``HostError`` with this message."""


@frozen
class ReplResult:
    """One execution: what it printed, its error (a traceback of the code's frames), the value
    given to ``FINAL`` (``final_set`` tells ``FINAL(None)`` from no call)."""

    stdout: str = ""
    stderr: str = ""
    error: str | None = None
    final: JSONValue = None
    final_set: bool = False
    truncated: bool = False  # the output passed the cap; the rest was dropped
    timed_out: bool = False
    state_lost: bool = False  # the process died or was killed: its variables are gone

    @property
    def ok(self) -> bool:
        return self.error is None


class Repl:
    """A Python process kept alive between executions, inside the code sandbox.

    ``callbacks``: host functions the code may call by name (their docstrings are the
    functions' docstrings in the REPL). ``sandbox``: default bubblewrap, else the subprocess
    fallback. ``workdir``: the code's working directory (default: a temporary one, removed on
    :meth:`aclose`). ``limits``: the sandbox's; ``wall_seconds`` is the default timeout of one
    execution, ``output_bytes`` the output kept per execution (in characters).
    """

    def __init__(
        self,
        *,
        callbacks: Mapping[str, HostFunction] | None = None,
        sandbox: Sandbox | None = None,
        workdir: Path | None = None,
        limits: Limits = REPL_LIMITS,
    ) -> None:
        self.callbacks = dict(callbacks or {})
        self.sandbox = sandbox if sandbox is not None else default_sandbox()
        self.limits = limits
        self.restarts = 0  # processes killed or died so far
        self._workdir = workdir
        self._own_workdir = workdir is None
        self._child: Child | None = None
        self._variables: dict[str, JSONValue] = {}
        self._lock = asyncio.Lock()
        self._closed = False

    @property
    def kind(self) -> SandboxKind:
        return self.sandbox.kind

    @property
    def workdir(self) -> Path | None:
        """The code's working directory (``None`` until the process first starts)."""
        return self._workdir

    async def __aenter__(self) -> Repl:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def execute(
        self,
        code: str,
        timeout: float | None = None,  # noqa: ASYNC109 - on expiry the process is killed
    ) -> ReplResult:
        """Run ``code`` in the persistent namespace (default timeout: ``limits.wall_seconds``)."""
        async with self._lock:
            child = await self._started()
            return await self._guarded(child, code, timeout or self.limits.wall_seconds)

    async def set_variable(self, name: str, value: JSONValue) -> None:
        """Bind ``name`` in the REPL to ``value`` (any JSON value; strings of any length).
        The binding survives a restart."""
        if not name.isidentifier():
            raise ValueError(f"not a Python name: {name!r}")
        async with self._lock:
            self._variables[name] = value
            if self._child is not None:
                await self._set(self._child, name, value)

    async def aclose(self) -> None:
        """Kill the process and remove the temporary working directory."""
        self._closed = True
        await self._discard()
        if self._own_workdir and self._workdir is not None:
            await asyncio.to_thread(shutil.rmtree, self._workdir, True)
            self._workdir = None

    # --- the process -------------------------------------------------------------------------

    async def _started(self) -> Child:
        if self._closed:
            raise RuntimeError("the REPL is closed")
        if self._child is None:
            self._child = await self._spawn()
            for name, value in self._variables.items():
                await self._set(self._child, name, value)
        return self._child

    async def _spawn(self) -> Child:
        if self._workdir is None:
            self._workdir = Path(tempfile.mkdtemp(prefix="agentloom-repl-"))
        config = {
            "output_chars": self.limits.output_bytes,
            "functions": [[name, _doc(name, fn)] for name, fn in self.callbacks.items()],
        }
        args = ("-s", "-c", child_source(), json.dumps(config))
        command = self.sandbox.prepare(self._workdir, self.limits, args)
        try:
            child = await Child.spawn(command)
        except PermissionError as exc:
            raise SandboxUnavailableError(
                f"the REPL sandbox cannot run {command.argv[0]}: give it an interpreter every "
                "user may run, e.g. SubprocessSandbox(python='/usr/bin/python3')"
            ) from exc
        await self._handshake(child)
        return child

    async def _handshake(self, child: Child) -> None:
        try:
            async with asyncio.timeout(self.limits.wall_seconds):
                ready = await child.receive()
        except (TimeoutError, BrokenChannel):
            ready = None
        if ready is None or ready.get("op") != "ready":
            stderr = await child.kill()
            raise SandboxUnavailableError(
                f"the REPL process did not start ({child.describe_exit()}): {stderr.strip()}"
            )

    async def _set(self, child: Child, name: str, value: JSONValue) -> None:
        await child.send({"op": "set", "name": name, "value": value})
        reply = await child.receive()
        if reply is None or reply.get("op") != "ok":
            await self._discard()
            raise AgentloomError(f"the REPL process failed to take variable {name!r}")

    async def _discard(self) -> str:
        """Kill the process (the next execution starts another); what it wrote to stderr."""
        child, self._child = self._child, None
        if child is None:
            return ""
        self.restarts += 1
        return await child.kill()

    # --- one execution -----------------------------------------------------------------------

    async def _guarded(self, child: Child, code: str, seconds: float) -> ReplResult:
        """The execution within ``seconds``; a timeout, a dead child or a broken channel
        discard the process, and so does any exception escaping (cancellation)."""
        scope = asyncio.timeout(seconds)
        try:
            async with scope:
                return await self._exchange(child, code)
        except TimeoutError:
            await self._discard()
            if not scope.expired():
                raise
            return ReplResult(
                error=f"TimeoutError: the code did not finish within {seconds:g} s; the REPL "
                "was restarted and its variables are lost",
                timed_out=True,
                state_lost=True,
            )
        except BrokenChannel as exc:
            await self._discard()
            return _lost(f"the REPL process sent {exc}")
        except BaseException:
            await self._discard()
            raise

    async def _exchange(self, child: Child, code: str) -> ReplResult:
        await child.send({"op": "exec", "code": code})
        while (message := await child.receive()) is not None:
            if message["op"] == "call":
                await child.send(await self._call(message))
            elif message["op"] == "result":
                return _result(message)
            else:
                raise BrokenChannel(f"an unexpected {message['op']!r} message")
        stderr = await self._discard()
        return _lost(f"the REPL process died ({child.describe_exit()}) {stderr}".strip())

    async def _call(self, message: Message) -> Message:
        """Run the host function the code called; its value or its error, as the reply."""
        name, args, kwargs = message.get("name"), message.get("args"), message.get("kwargs")
        fn = self.callbacks.get(name) if isinstance(name, str) else None
        if fn is None or not isinstance(args, list) or not isinstance(kwargs, dict):
            return {"op": "raise", "error": f"there is no host function {name!r}"}
        try:
            inspect.signature(fn).bind(*args, **kwargs)
        except TypeError as exc:
            return {"op": "raise", "error": f"{name}(): {exc}"}
        try:
            value = await fn(*args, **kwargs)
        except (CallbackError, AgentloomError) as exc:
            return {"op": "raise", "error": str(exc) or type(exc).__name__}
        return {"op": "return", "value": value}


def _doc(name: str, fn: HostFunction) -> str:
    """A host function's docstring in the REPL: its signature, then its own docstring."""
    try:
        signature = str(inspect.signature(fn, eval_str=True))
    except (NameError, TypeError, ValueError):
        signature = "(...)"
    return f"{name}{signature}\n\n{inspect.getdoc(fn) or ''}".strip()


def _result(message: Message) -> ReplResult:
    error = message.get("error")
    return ReplResult(
        stdout=str(message.get("stdout", "")),
        stderr=str(message.get("stderr", "")),
        error=None if error is None else str(error),
        final=message.get("final"),
        final_set=message.get("final_set") is True,
        truncated=message.get("truncated") is True,
    )


def _lost(why: str) -> ReplResult:
    return ReplResult(error=f"{why}; its variables are lost", state_lost=True)
