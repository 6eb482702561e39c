"""The loop guard: stops a model that keeps making the same tool calls.

Two patterns are blocked within one run: the same call (same tool name, same arguments once
their JSON is put in canonical form) made more than ``max_repeats`` times, and two calls that
alternate, A, B, A, B, ..., for ``ping_pong_cycles`` full cycles (both A and B are then
blocked for the rest of the run). Blocked calls are not recorded, so a model that insists
stays blocked.
"""

from __future__ import annotations

import json

from agentloom.llm.types import MessageToolCall

__all__ = ["LoopGuard", "call_key"]


def call_key(call: MessageToolCall) -> str:
    """The identity of a call: its name and canonical JSON arguments (raw text if not JSON)."""
    try:
        arguments = json.dumps(
            json.loads(call.arguments or "{}"), sort_keys=True, separators=(",", ":")
        )
    except json.JSONDecodeError:
        arguments = (call.arguments or "").strip()
    return f"{call.name}({arguments})"


class LoopGuard:
    """Decides whether the next tool call of a run may go ahead (:meth:`check`)."""

    def __init__(self, max_repeats: int = 3, ping_pong_cycles: int = 3) -> None:
        if max_repeats < 1:
            raise ValueError("max_repeats must be at least 1")
        if ping_pong_cycles < 2:
            raise ValueError("ping_pong_cycles must be at least 2")
        self.max_repeats = max_repeats
        self.ping_pong_cycles = ping_pong_cycles
        self._counts: dict[str, int] = {}
        self._history: list[str] = []
        self._ping_pong: set[str] = set()

    def check(self, call: MessageToolCall) -> str | None:
        """``None`` if ``call`` may run (it is then recorded), else why it is blocked."""
        key = call_key(call)
        seen = self._counts.get(key, 0)
        if seen >= self.max_repeats:
            return (
                f"blocked: {call.name} was already called {seen} times with these same "
                "arguments; the result will not change. Use the results you have, try "
                "something different, or give your final answer."
            )
        if key in self._ping_pong:
            return (
                f"blocked: {_short(key)} is part of a call pattern that was repeating without "
                "progress. Use the results you have, try something different, or give your "
                "final answer."
            )
        if self._completes_ping_pong(key):
            other = self._history[-1]
            self._ping_pong.update((key, other))
            return (
                f"blocked: you keep alternating between {_short(other)} and {_short(key)} "
                "without progress; neither call will run again. Use the results you have, "
                "try something different, or give your final answer."
            )
        self._counts[key] = seen + 1
        self._history.append(key)
        return None

    def reset(self) -> None:
        """Forget every call: a new run starts."""
        self._counts.clear()
        self._history.clear()
        self._ping_pong.clear()

    def _completes_ping_pong(self, key: str) -> bool:
        window = 2 * self.ping_pong_cycles - 1
        recent = self._history[-window:]
        if len(recent) < window:
            return False
        first, second = recent[0], recent[1]
        if first == second or key != second:
            return False
        return all(k == (first if i % 2 == 0 else second) for i, k in enumerate(recent))


def _short(key: str, limit: int = 80) -> str:
    return key if len(key) <= limit else key[: limit - 3] + "..."
