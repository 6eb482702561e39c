"""The retention sweep: what ended longer ago than ``[retention]`` keeps it is deleted.

The sweep is a job (kind ``retention``) queued by one schedule every ``[retention] every``
seconds, so that it runs in one process at a time whichever processes share the database, beside
requests, never in their way: each kind (:data:`agentloom.storage.retention.KINDS`) goes in
batches of ``batch_size`` rows, a short transaction each, the sweep yielding between them. A
project's own ``response_retention`` replaces the server's age for its stored responses. Each
sweep logs how many rows of each kind it deleted, and counts them
(``agentloom_retention_deleted_total``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import anyio
import anyio.lowlevel

from agentloom.config import RetentionSettings
from agentloom.frozen import frozen
from agentloom.storage.jobs import JobRow
from agentloom.storage.retention import KINDS, RESPONSES, Kind, Scope, SqlRetentionStore

log = logging.getLogger(__name__)


@frozen
class Swept:
    """What a sweep deleted of one kind."""

    rows: int = 0
    batches: int = 0  # the delete transactions it took

    def __add__(self, other: Swept) -> Swept:
        return Swept(self.rows + other.rows, self.batches + other.batches)


class RetentionSweep:
    """The handler of the sweep's jobs (:class:`agentloom.services.jobs.runner.JobHandler`)."""

    def __init__(
        self,
        store: SqlRetentionStore,
        settings: RetentionSettings,
        *,
        on_swept: Callable[[str, int], None] | None = None,
    ) -> None:
        """``on_swept``: told the rows each sweep deleted of each kind (the metrics)."""
        self._store = store
        self._settings = settings
        self._on_swept = on_swept

    async def schedule(self) -> None:
        """Have the sweep run every ``[retention] every`` seconds (one schedule for every
        process)."""
        await self._store.schedule(self._settings.every, time.time())

    async def run(self, job: JobRow) -> float | None:
        swept = await self.sweep(time.time())
        counts = ", ".join(f"{name} {done.rows}" for name, done in swept.items())
        log.info("retention sweep deleted: %s", counts)
        if self._on_swept is not None:
            for name, done in swept.items():
                self._on_swept(name, done.rows)
        return None

    async def sweep(self, now: float) -> dict[str, Swept]:
        """Delete, of every kind, what is older than its age at ``now``."""
        own = await self._store.project_ages()
        return {kind.name: await self._sweep_kind(kind, now, own) for kind in KINDS}

    async def _sweep_kind(self, kind: Kind, now: float, own: dict[str, float]) -> Swept:
        if kind is not RESPONSES:
            return await self._batches(kind, self._settings.age(kind.name), now, Scope())
        swept = Swept()
        for project, age in own.items():
            swept += await self._batches(kind, age, now, Scope(only=project))
        everyone_else = Scope(skip=tuple(own))
        return swept + await self._batches(kind, self._settings.age(kind.name), now, everyone_else)

    async def _batches(self, kind: Kind, age: float, now: float, scope: Scope) -> Swept:
        """Delete in batches until a batch comes back short; an age of 0 keeps everything."""
        if age <= 0:
            return Swept()
        size = self._settings.batch_size
        swept = Swept()
        while True:
            deleted = await self._store.sweep_batch(kind, now - age, size, scope)
            swept += Swept(deleted, 1)
            if deleted < size:
                return swept
            await anyio.lowlevel.checkpoint()  # let requests in between batches

    async def stopped(self, job: JobRow) -> None:
        """Nothing to record: each batch committed on its own; the next sweep goes on."""

    async def requeued(self, job: JobRow) -> None:
        """Nothing to undo: what was deleted stays deleted."""

    async def abandoned(self, job: JobRow, message: str) -> None:
        log.warning("a retention sweep was abandoned: %s", message)
