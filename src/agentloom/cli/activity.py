"""What ``agentloom chat`` shows of a run: the model's text as it streams, a tool activity line
per tool call (``⚙ calculator({"expression": "6*7"}) -> 42``) and a spinner while the model
thinks."""

from __future__ import annotations

import asyncio
from typing import TextIO

from agentloom.agents.base import (
    AgentEvent,
    AgentFinished,
    AgentResult,
    TextDelta,
    ToolFinished,
    ToolOutcome,
    ToolStarted,
    TurnStarted,
)

__all__ = ["Spinner", "TurnView", "tool_line"]

_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_MAX_SHOWN = 120  # characters of a tool's arguments or output on its line


def tool_line(outcome: ToolOutcome) -> str:
    """``⚙ name(arguments) -> output``, arguments and output on one line, shortened."""
    arrow = "-> error:" if outcome.is_error else "->"
    output = outcome.output.removeprefix("error: ") if outcome.is_error else outcome.output
    return f"⚙ {outcome.name}({_short(outcome.arguments)}) {arrow} {_short(output)}"


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _MAX_SHOWN else flat[: _MAX_SHOWN - 1] + "…"


class Spinner:
    """A one-line spinner on ``stream`` (a terminal; elsewhere it writes nothing).

    :meth:`start` draws the first frame at once and animates it from a task of its own;
    :meth:`stop` ends that task and erases the line. ``async with`` stops it whatever happens.
    """

    def __init__(self, stream: TextIO, interval: float = 0.1) -> None:
        self.stream = stream
        self.interval = interval
        self.enabled = stream.isatty()
        self._task: asyncio.Task[None] | None = None

    @property
    def spinning(self) -> bool:
        return self._task is not None

    async def start(self, label: str) -> None:
        await self.stop()
        if not self.enabled:
            return
        self._draw(_FRAMES[0], label)
        self._task = asyncio.create_task(self._spin(label))

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        await asyncio.wait([task])  # our own cancellation, if any, still propagates
        self.stream.write("\r\x1b[K")
        self.stream.flush()

    async def _spin(self, label: str) -> None:
        frame = 0
        while True:
            await asyncio.sleep(self.interval)
            frame = (frame + 1) % len(_FRAMES)
            self._draw(_FRAMES[frame], label)

    def _draw(self, frame: str, label: str) -> None:
        self.stream.write(f"\r{frame} {label}")
        self.stream.flush()

    async def __aenter__(self) -> Spinner:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


class TurnView:
    """Shows one run's events: text as it streams, a line per tool, the spinner between."""

    def __init__(self, stdout: TextIO, spinner: Spinner) -> None:
        self.stdout = stdout
        self.spinner = spinner
        self.line_open = False  # text written since the last newline
        self.model_text = ""  # what the current model turn streamed

    async def show(self, event: AgentEvent) -> AgentResult | None:
        from agentloom.cli.activity import tool_line

        if isinstance(event, TurnStarted):
            self.model_text = ""
            await self.spinner.start("thinking")
        elif isinstance(event, TextDelta):
            await self.spinner.stop()
            self.model_text += event.text
            self._write(event.text)
        elif isinstance(event, ToolStarted):
            self._end_line()
            await self.spinner.start(f"running {event.call.name}")
        elif isinstance(event, ToolFinished):
            await self.spinner.stop()
            self._end_line()
            self._write(tool_line(event.outcome) + "\n")
        elif isinstance(event, AgentFinished):
            await self.spinner.stop()
            self._finish(event.result.content)
            return event.result
        return None

    def _finish(self, content: str) -> None:
        if content.strip() and content.strip() not in self.model_text:
            self._end_line()  # the answer was not streamed as such (a text protocol, a note)
            self._write(content)
        self._end_line()

    def _write(self, text: str) -> None:
        if not text:
            return
        self.stdout.write(text)
        self.stdout.flush()
        self.line_open = not text.endswith("\n")

    def _end_line(self) -> None:
        if self.line_open:
            self._write("\n")
