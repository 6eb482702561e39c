"""Schedules on real databases: each due run queued once however many runners look, runs of one
schedule never overlapping, a failing run not stopping the next, kept across restarts."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from itertools import pairwise

import anyio
import pytest
import sqlalchemy as sa

from agentloom.config import JobSettings
from agentloom.errors import InvalidRequestError
from agentloom.services.jobs.runner import JobRunner
from agentloom.services.jobs.schedules import Schedules
from agentloom.storage import schema
from agentloom.storage.database import Database
from agentloom.storage.jobs import JobRow
from agentloom.tenancy import Policy, acting_for, current_project

KIND = "tick"


@dataclass
class Ticks:
    """A job handler that records its runs (and fails or dawdles when told to)."""

    runs: list[tuple[str, float, float]] = field(default_factory=list)  # runner, start, end
    jobs: list[str] = field(default_factory=list)  # the job each run ran
    ended: int = 0  # runs that have ended
    failing: set[int] = field(default_factory=set)  # run numbers (from 0) that raise
    slow: dict[int, float] = field(default_factory=dict)  # run number: seconds it takes
    projects: list[str] = field(default_factory=list)

    def handler(self, name: str) -> Handler:
        return Handler(self, name)


@dataclass
class Handler:
    ticks: Ticks
    name: str

    async def run(self, job: JobRow) -> float | None:
        number = len(self.ticks.runs)
        started = time.monotonic()
        self.ticks.projects.append(current_project())
        self.ticks.jobs.append(job.id)
        self.ticks.runs.append((self.name, started, started))
        await anyio.sleep(self.ticks.slow.get(number, 0.0))
        self.ticks.runs[number] = (self.name, started, time.monotonic())
        self.ticks.ended += 1
        if number in self.ticks.failing:
            raise RuntimeError("this tick fails")
        return None

    async def stopped(self, job: JobRow) -> None: ...

    async def requeued(self, job: JobRow) -> None: ...

    async def abandoned(self, job: JobRow, message: str) -> None: ...


async def until_done(ticks: Ticks, count: int, within: float = 30.0) -> None:
    """Wait until ``count`` runs have ended (a loaded host starts them late, not in a set time)."""
    deadline = time.monotonic() + within
    while ticks.ended < count:
        assert time.monotonic() < deadline, f"{ticks.ended} of {count} runs ended in {within}s"
        await anyio.sleep(0.05)


async def _any_policy(_project: str) -> Policy:
    return Policy()


@asynccontextmanager
async def runners(url: str, ticks: Ticks, count: int) -> AsyncIterator[list[Database]]:
    """``count`` job runners on the database, as so many server processes would run."""
    databases = [
        await Database.connect(url, instance_id=f"inst_{secrets.token_hex(4)}")
        for _ in range(count)
    ]
    settings = JobSettings(concurrency=2, lease_seconds=1.5)
    try:
        async with anyio.create_task_group() as tasks:
            for index, database in enumerate(databases):
                runner = JobRunner(
                    database.jobs,
                    instance_id=database.instance_id,
                    settings=settings,
                    policy=_any_policy,
                    schedules=database.schedules,
                )
                runner.handle(KIND, ticks.handler(f"runner{index}"))
                tasks.start_soon(runner.run)
            yield databases
            tasks.cancel_scope.cancel()
    finally:
        for database in databases:
            await database.aclose()


async def test_two_runners_queue_each_run_once(database: Database, database_url: str) -> None:
    ticks = Ticks()
    with acting_for("proj_a"):
        made = await Schedules(database.schedules).create(KIND, "agent_1", every=1.0)

    async with runners(database_url, ticks, 2):
        await until_done(ticks, 3)
        await asyncio.sleep(1.2)  # one more due time, two runners looking at it

    jobs = await database.runner.read(
        lambda conn: conn.scalar(
            sa.select(sa.func.count()).where(schema.jobs.c.subject == "agent_1")
        )
    )
    assert len(set(ticks.jobs)) == len(ticks.jobs)  # every job run once
    # every due time queued once: one job a run, and at most one more queued when they stopped
    assert len(ticks.runs) <= jobs <= len(ticks.runs) + 1
    # one run at a time, whichever runner has it (a start's spacing is the host's: under load a
    # late run and the next, on time, start closer than the schedule's second)
    assert all(later[1] >= earlier[2] for earlier, later in pairwise(ticks.runs))
    assert set(ticks.projects) == {"proj_a"}  # a run acts as the schedule's project
    with acting_for("proj_a"):
        assert (await database.schedules.get(made.id)).runs == jobs  # type: ignore[union-attr]


async def test_runs_never_overlap_and_a_failing_run_does_not_stop_the_next(
    database: Database, database_url: str
) -> None:
    ticks = Ticks(failing={1}, slow={0: 2.2})
    with acting_for("proj_a"):
        await Schedules(database.schedules).create(KIND, "agent_1", every=1.0, start_at=time.time())

    async with runners(database_url, ticks, 2):
        await until_done(ticks, 3)  # the one after the failing one ran

    for (_, _, ended), (_, started, _) in pairwise(ticks.runs):
        assert started >= ended  # the long first run delayed the second


async def test_due_schedules_fire_once_pause_and_outlive_a_restart(
    database: Database, database_url: str
) -> None:
    schedules = Schedules(database.schedules)
    store = database.schedules
    with acting_for("proj_a"):
        made = await schedules.create(KIND, "agent_1", every=60.0, start_at=time.time() - 3600)
    now = time.time()

    fired = [await store.fire(now), await store.fire(now)]  # the second: its job is queued
    await database.runner.write(
        lambda conn: conn.execute(schema.jobs.update().values(status="done"))
    )
    with acting_for("proj_a"):
        moved = await store.get(made.id)
        await schedules.change(made.id, paused=True)
    paused = await store.fire(now + 3600)
    reopened = await Database.connect(database_url, instance_id="inst_again")
    try:
        with acting_for("proj_a"):
            await Schedules(reopened.schedules).change(made.id, paused=False)
        resumed = await reopened.schedules.fire(now + 3600)
    finally:
        await reopened.aclose()

    assert fired == [1, 0]
    assert moved is not None
    assert now < moved.next_run_at <= now + 60.5  # an hour late: once, then on from now
    assert (paused, resumed) == (0, 1)


@pytest.mark.parametrize(
    ("every", "cron", "param"),
    [
        (None, None, "schedule"),
        (60.0, "* * * * *", "schedule"),
        (0.2, None, "schedule.every"),
        (None, "0 0 31 2 *", "schedule.cron"),
        (None, "every minute", "schedule.cron"),
    ],
)
async def test_a_bad_schedule_is_refused(
    database: Database, every: float | None, cron: str | None, param: str
) -> None:
    with pytest.raises(InvalidRequestError) as refused:
        await Schedules(database.schedules).create(KIND, "agent_1", every=every, cron=cron)

    assert refused.value.param == param


async def test_a_cron_schedule_runs_at_its_times(database: Database) -> None:
    made = await Schedules(database.schedules).create(KIND, "agent_1", cron="*/5 * * * *")

    assert made.next_run_at % 300 == 0
    assert 0 < made.next_run_at - time.time() <= 300
