"""In-process wake-ups by key: whoever waits on a key (a response's id) is woken when it moves.

Local writers wake keys directly; the PostgreSQL listener wakes them for writes made by other
processes (the notification's payload is the key; an empty payload wakes everyone: the
listener reconnected and may have missed some).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager


class Wakeups:
    def __init__(self) -> None:
        self._waiting: dict[str, set[asyncio.Event]] = {}

    def wake(self, key: str = "") -> None:
        """Wake the waiters of ``key`` (of every key when it is empty)."""
        groups = self._waiting.values() if not key else [self._waiting.get(key, set())]
        for waiters in groups:
            for event in waiters:
                event.set()

    @contextmanager
    def waiting(self, key: str) -> Iterator[asyncio.Event]:
        """An event set when ``key`` is woken while the block runs (register before reading
        what may change, then wait: nothing is missed)."""
        event = asyncio.Event()
        waiters = self._waiting.setdefault(key, set())
        waiters.add(event)
        try:
            yield event
        finally:
            waiters.discard(event)
            if not waiters:
                self._waiting.pop(key, None)
