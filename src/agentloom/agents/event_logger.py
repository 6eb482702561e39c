"""Printable lines for a turn's events, like Llama Stack's ``EventLogger``.

```python
async for line in EventLogger().log(agent.create_turn("What is 6*7?", session)):
    line.print()
# inference> Let me compute that.
# tool_execution> Tool:calculator Args:{"expression": "6*7"}
# tool_execution> Tool:calculator Response:42
# inference> It is 42.
```

Model text streams as it arrives (``end=""``); every other step is a line of its own
(``shield_call> No Violation``, or the refusal, when the agent has shields).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import TYPE_CHECKING

from agentloom.agents.turns import (
    HostedToolCall,
    LocalToolFinished,
    LocalToolStarted,
    ShieldCalled,
    TurnCompleted,
    TurnEvent,
    TurnResult,
    TurnTextDelta,
)
from agentloom.frozen import frozen

if TYPE_CHECKING:
    from openai.types.responses import ResponseOutputItem

__all__ = ["EventLogger", "LogLine", "describe_hosted_call"]

_MAX_SHOWN = 400  # characters of a tool's output or arguments shown


@frozen
class LogLine:
    """A piece of the log: ``role> content`` (or bare ``content`` continuing a line)."""

    content: str
    role: str | None = None
    end: str = "\n"

    def __str__(self) -> str:
        return f"{self.role}> {self.content}" if self.role else self.content

    def print(self) -> None:
        print(str(self), end=self.end, flush=True)


class EventLogger:
    """Turns a turn's events into :class:`LogLine` s."""

    async def log(self, events: AsyncIterable[TurnEvent]) -> AsyncIterator[LogLine]:
        formatter = _Formatter()
        async for event in events:
            for line in formatter.lines(event):
                yield line

    def lines(self, events: Iterable[TurnEvent]) -> list[LogLine]:
        """The lines of events already collected."""
        return list(self.stream(events))

    def stream(self, events: Iterable[TurnEvent]) -> Iterator[LogLine]:
        """The lines of a synchronous stream of events, as they come."""
        formatter = _Formatter()
        for event in events:
            yield from formatter.lines(event)

    def text(self, events: Iterable[TurnEvent]) -> str:
        """The whole log as it would be printed."""
        return "".join(str(line) + line.end for line in self.lines(events))


class _Formatter:
    def __init__(self) -> None:
        self.in_text = False

    def lines(self, event: TurnEvent) -> list[LogLine]:
        if isinstance(event, TurnTextDelta):
            return [self._text(event.text)] if event.text else []
        closing = [LogLine("")] if self.in_text else []
        self.in_text = False
        return closing + _step(event)

    def _text(self, delta: str) -> LogLine:
        if self.in_text:
            return LogLine(delta, end="")
        self.in_text = True
        return LogLine(delta, role="inference", end="")


def _step(event: TurnEvent) -> list[LogLine]:
    if isinstance(event, LocalToolStarted):
        call = event.call
        return [_tool(f"Tool:{call.name} Args:{_short(call.arguments)}")]
    if isinstance(event, LocalToolFinished):
        outcome = event.outcome
        label = "Error" if outcome.is_error else "Response"
        return [_tool(f"Tool:{outcome.name} {label}:{_short(outcome.output)}")]
    if isinstance(event, HostedToolCall):
        return [_tool(f"{describe_hosted_call(event.item)} (on the server)")]
    if isinstance(event, ShieldCalled):
        violation = event.step.violation
        shown = "No Violation" if violation is None else violation.user_message or "Violation"
        return [LogLine(shown, role="shield_call")]
    if isinstance(event, TurnCompleted):
        return _ending(event.result)
    return []


def _ending(result: TurnResult) -> list[LogLine]:
    if result.status == "requires_action":
        waiting = ", ".join(f"{call.name}({call.arguments})" for call in result.pending_calls)
        return [_tool(f"waiting for the caller's output of {waiting}")]
    if result.status == "max_rounds":
        return [LogLine("stopped: the model was still calling tools", role="turn")]
    if result.status == "incomplete":
        return [LogLine("stopped: the response is incomplete", role="turn")]
    return []


def describe_hosted_call(item: ResponseOutputItem) -> str:
    """One line for a tool call the server ran, e.g. ``web_search "kettle"``."""
    if item.type == "web_search_call":
        query = getattr(item.action, "query", None)
        return f"web_search {json.dumps(query)}" if query else "web_search"
    if item.type == "file_search_call":
        return f"file_search {json.dumps(item.queries)}"
    if item.type == "mcp_call":
        error = item.error
        shown = error if isinstance(error, str) else f"error: {error.type}" if error else None
        shown = shown or item.output or ""
        return f"mcp {item.server_label}.{item.name}({item.arguments}) -> {_short(shown)}"
    if item.type == "code_interpreter_call":
        return f"code_interpreter {_short(item.code or '')}"
    return item.type


def _tool(content: str) -> LogLine:
    return LogLine(content, role="tool_execution")


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _MAX_SHOWN else flat[: _MAX_SHOWN - 1] + "…"
