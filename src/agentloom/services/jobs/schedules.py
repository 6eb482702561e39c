"""Recurring jobs: a schedule queues a job of some kind every so often (``every`` seconds,
start to start, or at the times of a ``cron`` expression, UTC), exactly once across the server
processes, never two runs of one schedule at once (:mod:`agentloom.storage.schedules`). Its jobs
are run by the handler of their kind, like any job: retried, taken over, handed back.

This is the mechanism managed agents' schedules run on; the resolution is about a second (the
job runners look for due schedules that often).
"""

from __future__ import annotations

import time
from typing import Any

from agentloom.cron import Cron, CronError
from agentloom.errors import InvalidRequestError, NotFoundError
from agentloom.ids import new_id
from agentloom.storage.schedules import ScheduleRow, SqlScheduleStore

MIN_EVERY = 1.0  # seconds: the runners look for due schedules about this often


class Schedules:
    def __init__(self, store: SqlScheduleStore, *, min_every: float = MIN_EVERY) -> None:
        self._store = store
        self._min_every = min_every

    async def create(
        self,
        kind: str,
        subject: str,
        payload: str = "{}",
        *,
        every: float | None = None,
        cron: str | None = None,
        start_at: float | None = None,
    ) -> ScheduleRow:
        """A schedule of the running project: its first run at ``start_at`` (default: one
        period from now)."""
        row = self.new(kind, subject, payload, every=every, cron=cron, start_at=start_at)
        await self._store.create(row)
        return row

    def new(
        self,
        kind: str,
        subject: str,
        payload: str = "{}",
        *,
        every: float | None = None,
        cron: str | None = None,
        start_at: float | None = None,
    ) -> ScheduleRow:
        """The row :meth:`create` stores (checked), for a caller that stores it with what it
        schedules (:func:`agentloom.storage.schedules.insert`)."""
        now = time.time()
        probe = ScheduleRow("", kind, subject, payload, now, now, every=every, cron=cron)
        self._check(probe)
        first = start_at if start_at is not None else probe.following(now)
        return ScheduleRow(
            id=new_id("sched"),
            kind=kind,
            subject=subject,
            payload=payload,
            next_run_at=first,
            created_at=now,
            every=every,
            cron=cron,
        )

    async def get(self, schedule_id: str) -> ScheduleRow:
        row = await self._store.get(schedule_id)
        if row is None:
            raise NotFoundError(f"No schedule found with id '{schedule_id}'.", param="schedule_id")
        return row

    async def change(
        self,
        schedule_id: str,
        *,
        every: float | None = None,
        cron: str | None = None,
        paused: bool | None = None,
    ) -> ScheduleRow:
        """A new period or expression (its next run moves to one from now), or paused or
        resumed."""
        row = await self.get(schedule_id)
        values: dict[str, Any] = {}
        if every is not None or cron is not None:
            now = time.time()
            changed = ScheduleRow(row.id, row.kind, row.subject, row.payload, now, now, every, cron)
            self._check(changed)
            values.update(every=every, cron=cron, next_run_at=changed.following(now))
        if paused is not None:
            values["paused"] = paused
        return await self._store.update(schedule_id, values) or row

    async def delete(self, schedule_id: str) -> None:
        if not await self._store.delete(schedule_id):
            raise NotFoundError(f"No schedule found with id '{schedule_id}'.", param="schedule_id")

    def _check(self, row: ScheduleRow) -> None:
        if (row.every is None) == (row.cron is None):
            raise InvalidRequestError(
                "A schedule needs either 'every' (seconds) or 'cron', not both or neither.",
                param="schedule",
            )
        if row.every is not None and not row.every >= self._min_every:
            raise InvalidRequestError(
                f"A schedule's 'every' must be at least {self._min_every:g} seconds.",
                param="schedule.every",
            )
        if row.cron is not None:
            try:
                Cron.parse(row.cron)
            except CronError as exc:
                raise InvalidRequestError(
                    f"Invalid cron expression '{row.cron}': {exc}.", param="schedule.cron"
                ) from None
