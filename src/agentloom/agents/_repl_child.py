"""The child side of :class:`agentloom.agents.repl.Repl`: one Python namespace kept alive,
served over JSON lines.

It runs as ``python -s -c <this source> <config JSON>`` inside the sandbox, so it is standalone
and imports only the standard library. One JSON object per line, the host writing the child's
stdin and reading its stdout:

- host -> child: ``{"op": "exec", "code"}``, ``{"op": "set", "name", "value"}``, and the
  replies to a call: ``{"op": "return", "value"}`` or ``{"op": "raise", "error"}``;
- child -> host: ``{"op": "ready"}`` once, ``{"op": "result", "stdout", "stderr", "error",
  "final", "final_set", "truncated"}`` per exec, ``{"op": "ok"}`` per set, and
  ``{"op": "call", "name", "args", "kwargs"}`` when the code calls a host function (the child
  blocks until the reply).

Before any code runs the channel moves to private descriptors (not inherited by subprocesses);
descriptor 0 becomes ``/dev/null`` and 1 and 2 a scratch file whose contents join the cell's
output, so neither ``print`` nor a subprocess can write into the channel.
"""

from __future__ import annotations

import ast
import builtins
import io
import json
import linecache
import os
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable
from typing import IO, Any

CELL = "<cell-"  # the file name prefix of the code the host sends: its frames are the user's


class HostError(Exception):
    """A host function failed; the message says why."""


class _Channel:
    def __init__(self) -> None:
        self._in = os.fdopen(os.dup(0), "rb")
        self._out = os.fdopen(os.dup(1), "wb")
        self._lock = threading.Lock()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)

    def send(self, message: dict[str, Any]) -> None:
        self._out.write(json.dumps(message).encode("ascii") + b"\n")
        self._out.flush()

    def receive(self) -> dict[str, Any] | None:
        line = self._in.readline()
        if not line:
            return None
        message: dict[str, Any] = json.loads(line)
        return message

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.send(message)
            reply = self.receive()
        if reply is None:
            raise SystemExit(0)  # the host has gone
        return reply


class _Budget:
    """The characters of output a cell may still produce (shared by stdout and stderr)."""

    def __init__(self, chars: int) -> None:
        self.left = chars
        self.truncated = False

    def take(self, text: str) -> str:
        if len(text) > self.left:
            self.truncated = True
            text = text[: self.left]
        self.left -= len(text)
        return text


class _Output(io.StringIO):
    def __init__(self, budget: _Budget) -> None:
        super().__init__()
        self.budget = budget

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        super().write(self.budget.take(text))
        return len(text)


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def _traceback(exc: BaseException) -> str:
    """The error as Python prints it, keeping only the frames of the host's code."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(CELL)]
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames)]
    tail = traceback.format_exception_only(type(exc), exc)
    return "".join((lines if frames else []) + tail).rstrip()


def _scratch() -> IO[bytes]:
    try:
        return tempfile.TemporaryFile()
    except OSError:  # nowhere to write: raw output is dropped
        return open(os.devnull, "w+b")


class _Repl:
    def __init__(self, channel: _Channel, config: dict[str, Any]) -> None:
        self.channel = channel
        self.output_chars = int(config["output_chars"])
        self.cells = 0
        self.final: Any = None
        self.final_set = False
        self.raw = _scratch()
        os.dup2(self.raw.fileno(), 1)
        os.dup2(self.raw.fileno(), 2)
        self.namespace: dict[str, Any] = {
            "__name__": "__main__",
            "__builtins__": builtins,
            "FINAL": self._final_function(),
            "HostError": HostError,
        }
        for name, doc in config["functions"]:
            self.namespace[name] = self._host_function(name, doc)

    def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        op = message.get("op")
        if op == "exec":
            return self.execute(str(message["code"]))
        if op == "set":
            self.namespace[str(message["name"])] = message["value"]
            return {"op": "ok"}
        return {"op": "failed", "error": f"unknown op {op!r}"}

    def execute(self, code: str) -> dict[str, Any]:
        self.cells += 1
        budget = _Budget(self.output_chars)
        out, err = _Output(budget), _Output(budget)
        self.final, self.final_set = None, False
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        error = None
        try:
            self._run(code, f"{CELL}{self.cells}>")
        except BaseException as exc:
            error = _traceback(exc)
        finally:
            sys.stdout, sys.stderr = saved
        raw = self._raw_output(budget)
        return {
            "op": "result",
            "stdout": out.getvalue() + raw,
            "stderr": err.getvalue(),
            "error": error,
            "final": self.final,
            "final_set": self.final_set,
            "truncated": budget.truncated,
        }

    def _run(self, code: str, filename: str) -> None:
        """Run the cell; the value of a last bare expression is printed, as in a REPL."""
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        tree = ast.parse(code, filename, "exec")
        last = tree.body[-1] if tree.body else None
        if isinstance(last, ast.Expr):
            tree.body.pop()
        exec(compile(tree, filename, "exec"), self.namespace)
        if isinstance(last, ast.Expr):
            value = eval(compile(ast.Expression(last.value), filename, "eval"), self.namespace)
            if value is not None:
                print(repr(value))

    def _raw_output(self, budget: _Budget) -> str:
        """What the process wrote to descriptors 1 and 2 during the cell (subprocesses too)."""
        for stream in (sys.__stdout__, sys.__stderr__):
            try:
                if stream is not None:
                    stream.flush()
            except (OSError, ValueError):
                continue
        size = os.fstat(self.raw.fileno()).st_size
        self.raw.seek(0)
        data = self.raw.read(min(size, budget.left * 4 + 4))
        self.raw.seek(0)
        self.raw.truncate()
        if len(data) < size:
            budget.truncated = True
        return budget.take(data.decode("utf-8", "replace"))

    def _final_function(self) -> Callable[[Any], None]:
        def FINAL(value: Any) -> None:
            """Give the answer: the run ends once this cell is done."""
            self.final, self.final_set = _jsonable(value), True

        return FINAL

    def _host_function(self, name: str, doc: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                json.dumps([args, kwargs], allow_nan=False)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"{name}() takes JSON values only: {exc}") from None
            message = {"op": "call", "name": name, "args": list(args), "kwargs": kwargs}
            reply = self.channel.request(message)
            if reply.get("op") == "raise":
                raise HostError(str(reply.get("error")))
            return reply.get("value")

        call.__name__ = call.__qualname__ = name
        call.__doc__ = doc  # starts with the host function's signature
        call.__annotations__ = {}
        return call


def main(argv: list[str]) -> None:
    channel = _Channel()
    repl = _Repl(channel, json.loads(argv[1]))
    channel.send({"op": "ready"})
    while (message := channel.receive()) is not None:
        channel.send(repl.handle(message))


if __name__ == "__main__":
    main(sys.argv)
