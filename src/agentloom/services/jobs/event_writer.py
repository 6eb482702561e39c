"""Stream events of a durable job written as they are made, in small batches: an event waits at
most :data:`BATCH_DELAY` for others to be written with it (the last one is written at once), so
a follower in any process sees them within milliseconds without a write per token. Each batch
written wakes the job's followers in this process (other processes are notified by the store).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from agentloom.storage.connection_faults import DATABASE_FAULTS
from agentloom.storage.events import SqlEventStore, StoredEvent

__all__ = ["BATCH_DELAY", "EventWriter"]

log = logging.getLogger(__name__)

BATCH_DELAY = 0.02  # seconds an event waits for others to be written with it


class EventWriter:
    """The events of ``subject`` (a background response, a managed agent's run)."""

    def __init__(self, events: SqlEventStore, wake: Callable[[str], None], subject: str) -> None:
        self._events = events
        self._wake = wake
        self._subject = subject
        self._pending: list[StoredEvent] = []
        self._timer: asyncio.Task[None] | None = None
        self._writing = asyncio.Lock()  # batches are written in order

    async def add(self, event: StoredEvent, *, last: bool = False) -> None:
        """Write ``event`` soon (``last``: now, with those waiting)."""
        self._pending.append(event)
        if last:
            await self.flush()
        elif self._timer is None:
            self._timer = asyncio.ensure_future(self._later())

    async def _later(self) -> None:
        await asyncio.sleep(BATCH_DELAY)
        self._timer = None
        try:
            await self.flush()
        except DATABASE_FAULTS:  # kept: the next write (the last event's at the latest) retries
            log.warning("could not write events of %s yet", self._subject, exc_info=True)

    async def flush(self) -> None:
        if self._timer is not None and self._timer is not asyncio.current_task():
            self._timer.cancel()
            self._timer = None
        async with self._writing:
            pending, self._pending = self._pending, []
            if not pending:
                return
            try:
                await self._events.append(self._subject, pending)
            except BaseException:
                self._pending[:0] = pending  # kept, in order, for the next write
                raise
            self._wake(self._subject)
