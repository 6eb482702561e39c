"""Job pools on real databases: each kind has its own slots in a process, so jobs of one kind that
never end do not hold up another kind; within a kind the claim goes round the projects, so one
project's backlog does not hold up another project's one job; several runners still claim each
job once."""

from __future__ import annotations

import secrets
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest
from starlette.applications import Starlette

from agentloom.config import ConfigError, JobPools, JobSettings, load_settings
from agentloom.services.jobs.runner import JobRunner
from agentloom.storage.database import Database
from agentloom.storage.jobs import JobRow, SqlJobStore
from agentloom.tenancy import Policy

pytestmark = pytest.mark.both_databases  # what these check is the claim, on each storage

STUCK = "stuck"  # a kind whose jobs never end (until cancelled)
QUICK = "quick"
BOUND = 10.0  # seconds a test waits at most for what it expects (it comes in well under one)


@dataclass
class Runs:
    """A job handler that records what ran (runner, kind, project, job id), in order; jobs of
    ``STUCK`` wait until they are cancelled."""

    done: list[tuple[str, str, str, str]] = field(default_factory=list)
    started: list[str] = field(default_factory=list)  # job ids
    changed: anyio.Event = field(default_factory=anyio.Event)

    def of(self, kind: str) -> list[tuple[str, str, str, str]]:
        return [run for run in self.done if run[1] == kind]

    async def until(self, enough: int, kind: str = QUICK) -> None:
        with anyio.fail_after(BOUND):
            while len(self.of(kind)) < enough:
                await self.changed.wait()
                self.changed = anyio.Event()


@dataclass
class Handler:
    runs: Runs
    name: str

    async def run(self, job: JobRow) -> float | None:
        self.runs.started.append(job.id)
        if job.kind == STUCK:
            await anyio.sleep_forever()
        await anyio.sleep(0.01)
        self.runs.done.append((self.name, job.kind, job.project_id, job.id))
        self.runs.changed.set()
        return None

    async def stopped(self, job: JobRow) -> None: ...

    async def requeued(self, job: JobRow) -> None: ...

    async def abandoned(self, job: JobRow, message: str) -> None: ...


async def _any_policy(_project: str) -> Policy:
    return Policy()


def _job(kind: str, project: str) -> JobRow:
    job_id = f"job_{secrets.token_hex(6)}"
    return JobRow(job_id, project, kind, job_id, None, "{}", created_at=time.time())


async def _queue(store: SqlJobStore, kind: str, project: str, count: int) -> list[str]:
    jobs = [_job(kind, project) for _ in range(count)]
    for job in jobs:
        await store.enqueue(job)
    return [job.id for job in jobs]


@asynccontextmanager
async def runners(
    url: str, runs: Runs, count: int, settings: JobSettings
) -> AsyncIterator[list[JobRunner]]:
    """``count`` job runners on the database, as so many server processes would run, each
    running ``STUCK`` and ``QUICK`` jobs."""
    databases = [
        await Database.connect(url, instance_id=f"inst_{secrets.token_hex(4)}")
        for _ in range(count)
    ]
    made = [
        JobRunner(d.jobs, instance_id=d.instance_id, settings=settings, policy=_any_policy)
        for d in databases
    ]
    try:
        async with anyio.create_task_group() as tasks:
            for index, runner in enumerate(made):
                runner.handle(STUCK, Handler(runs, f"runner{index}"))
                runner.handle(QUICK, Handler(runs, f"runner{index}"))
                tasks.start_soon(runner.run)
            yield made
            tasks.cancel_scope.cancel()
    finally:
        for database in databases:
            await database.aclose()


async def test_a_kind_held_by_stuck_jobs_does_not_delay_another_kind(
    database: Database, database_url: str
) -> None:
    stuck = await _queue(database.jobs, STUCK, "proj_a", 5)  # more than its pool
    quick = await _queue(database.jobs, QUICK, "proj_a", 3)
    runs = Runs()

    async with runners(database_url, runs, 1, JobSettings(concurrency=2)):
        await runs.until(3)
        started_stuck = [job for job in runs.started if job in stuck]

    assert sorted(run[3] for run in runs.of(QUICK)) == sorted(quick)
    assert len(started_stuck) == 2  # its pool, and no more: the others wait in the queue


async def test_a_project_with_a_backlog_does_not_delay_another_projects_job(
    database: Database, database_url: str
) -> None:
    backlog = await _queue(database.jobs, QUICK, "proj_busy", 30)
    [single] = await _queue(database.jobs, QUICK, "proj_quiet", 1)
    runs = Runs()

    async with runners(database_url, runs, 1, JobSettings(concurrency=1)):
        await runs.until(3)

    order = [run[3] for run in runs.of(QUICK)]
    assert single in order[:2]  # served in its turn, not after the 30 queued before it
    assert set(order) - {single} <= set(backlog)


async def test_the_claim_goes_round_the_projects_with_jobs_waiting(database: Database) -> None:
    store = database.jobs
    for project, count in (("proj_a", 6), ("proj_b", 6), ("proj_c", 1)):
        await _queue(store, QUICK, project, count)

    claimed: list[str] = []
    for _ in range(7):  # one slot: each job ends before the next is claimed
        job = await store.claim("inst_one", now=time.time(), lease=30, kinds=[QUICK])
        assert job is not None
        claimed.append(job.project_id)
        await store.finish(job.id, "inst_one")

    assert set(claimed[:3]) == {"proj_a", "proj_b", "proj_c"}
    assert claimed[3:] == ["proj_a", "proj_b", "proj_a", "proj_b"]


async def test_the_project_with_fewer_jobs_running_is_served_first(database: Database) -> None:
    store = database.jobs
    await _queue(store, QUICK, "proj_a", 10)
    await _queue(store, QUICK, "proj_b", 2)

    claimed = [
        await store.claim(f"inst_{n}", now=time.time(), lease=30, kinds=[QUICK]) for n in range(4)
    ]  # none ends: they are running, in these or other processes

    assert Counter(job.project_id for job in claimed if job is not None) == Counter(
        {"proj_a": 2, "proj_b": 2}
    )


async def test_a_claim_takes_only_the_kinds_asked_for(database: Database) -> None:
    store = database.jobs
    await _queue(store, STUCK, "proj_a", 2)
    [quick] = await _queue(store, QUICK, "proj_a", 1)

    first = await store.claim("inst_one", now=time.time(), lease=30, kinds=[QUICK])
    second = await store.claim("inst_one", now=time.time(), lease=30, kinds=[QUICK])
    none = await store.claim("inst_one", now=time.time(), lease=30, kinds=[])

    assert first is not None
    assert first.id == quick
    assert second is None
    assert none is None


async def test_two_runners_claim_each_job_once(database: Database, database_url: str) -> None:
    queued: list[str] = []
    for project in ("proj_a", "proj_b", "proj_c"):
        queued += await _queue(database.jobs, QUICK, project, 20)
    runs = Runs()

    async with runners(database_url, runs, 2, JobSettings(concurrency=3)):
        await runs.until(len(queued))

    ran = Counter(run[3] for run in runs.of(QUICK))
    assert sorted(ran) == sorted(queued)
    assert set(ran.values()) == {1}  # each once, in one runner or the other
    assert Counter(job for job in runs.started) == ran


async def test_claims_racing_from_two_processes_take_each_job_once(
    database: Database, database_url: str
) -> None:
    queued: list[str] = []
    for project in ("proj_a", "proj_b"):
        queued += await _queue(database.jobs, QUICK, project, 15)
    other = await Database.connect(database_url, instance_id="inst_other")
    claimed: list[JobRow | None] = []

    async def claim(store: SqlJobStore, instance: str) -> None:
        claimed.append(await store.claim(instance, now=time.time(), lease=30, kinds=[QUICK]))

    try:
        async with anyio.create_task_group() as tasks:
            for _ in range(20):  # 40 claims at once for 30 jobs, half from each process
                tasks.start_soon(claim, database.jobs, "inst_one")
                tasks.start_soon(claim, other.jobs, "inst_other")
    finally:
        await other.aclose()

    ids = [job.id for job in claimed if job is not None]
    assert sorted(ids) == sorted(queued)  # each job once; none left while claims came back empty


def test_a_kind_has_its_pool_else_its_own_setting_else_concurrency() -> None:
    settings = JobSettings(concurrency=3, pools=JobPools(response=1, ingest=5))

    assert settings.pool("response") == 1
    assert settings.pool("webhook") == 3
    assert settings.pool("ingest", 2) == 5  # [jobs.pools] wins over ingestion_concurrency
    assert settings.pool("agent_run", 2) == 2
    assert settings.pool("a_kind_of_a_test") == 3


def test_a_pool_for_no_kind_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "agentloom.toml"
    path.write_text("[jobs.pools]\nresponses = 2\n")

    with pytest.raises(ConfigError, match=r"pools\.responses"):
        load_settings(path, env={})


async def test_every_kind_the_server_runs_has_a_pool_setting(app: Starlette) -> None:
    assert set(app.state.runtime.jobs.pools) == set(JobPools.model_fields)
