"""Retention on real databases: what ended longer ago than its kind's age is deleted and what is
newer kept, a response with everything it owns; what is still going is never deleted; a sweep
goes in batches that reads pass between; a project's own age for its responses wins; one
schedule, fired once across processes, queues the sweep, and a job runner running it deletes."""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.config import JobSettings, RetentionSettings, load_settings
from agentloom.metrics import Metrics
from agentloom.services.jobs.retention import RetentionSweep, Swept
from agentloom.services.jobs.runner import JobRunner
from agentloom.storage import schema
from agentloom.storage.database import Database
from agentloom.storage.retention import SWEEP_JOB
from agentloom.tenancy import Policy

pytestmark = pytest.mark.both_databases  # the deletes are SQL of each dialect

NOW = 1_800_000_000.0
OLD = NOW - 1000.0  # older than the ages of these tests (100 s)
NEW = NOW - 10.0
AGE = 100.0
KINDS_OF_EVENTS = ("response.created", "response.completed")
DOCS = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
ALL_KINDS = RetentionSettings(
    responses=AGE,
    response_events=AGE,
    jobs=AGE,
    webhook_deliveries=AGE,
    audit_logs=AGE,
    request_log=AGE,
)


def _response(
    rid: str, created_at: float, status: str = "completed", project: str = "proj_default"
) -> Callable[[Connection], None]:
    """A stored response with an input item, an output item and two stream events (its
    first and its terminal one)."""

    def write(conn: Connection) -> None:
        owner = {"project_id": project}
        conn.execute(
            schema.responses.insert().values(
                id=rid, created_at=created_at, model="m", status=status, body="{}", **owner
            )
        )
        for kind in (0, 1):
            item = {"id": f"item_{rid}_{kind}", "response_id": rid, "kind": kind, "position": 0}
            conn.execute(schema.items.insert().values(body="{}", **item, **owner))
        for number, kind in enumerate(KINDS_OF_EVENTS):
            event = {"response_id": rid, "sequence_number": number, "type": kind}
            conn.execute(schema.response_events.insert().values(body="{}", **event, **owner))

    return write


def _job(jid: str, created_at: float, status: str = "done") -> Callable[[Connection], None]:
    return lambda conn: conn.execute(
        schema.jobs.insert().values(
            id=jid, kind="response", subject=jid, payload="{}", status=status, created_at=created_at
        )
    )


def _delivery(
    did: str, created_at: float, status: str = "delivered"
) -> Callable[[Connection], None]:
    return lambda conn: conn.execute(
        schema.webhook_deliveries.insert().values(
            id=did,
            endpoint_id="we_1",
            event_id=f"evt_{did}",
            event_type="response.completed",
            body="{}",
            status=status,
            created_at=created_at,
        )
    )


def _audit(aid: str, at: float) -> Callable[[Connection], None]:
    return lambda conn: conn.execute(
        schema.audit_logs.insert().values(
            id=aid, type="project.updated", effective_at=at, actor_id="admin", body="{}"
        )
    )


def _logged(rid: str, at: float) -> Callable[[Connection], None]:
    return lambda conn: conn.execute(
        schema.request_log.insert().values(
            id=rid,
            project_id="proj_default",
            endpoint="responses",
            input_tokens=0,
            cached_tokens=0,
            output_tokens=0,
            cost=0,
            latency_ms=1.0,
            status=200,
            created_at=at,
        )
    )


def _project(pid: str, response_retention: float | None) -> Callable[[Connection], None]:
    return lambda conn: conn.execute(
        schema.projects.insert().values(
            id=pid, name=pid, created_at=OLD, response_retention=response_retention
        )
    )


async def _write(database: Database, *writes: Callable[[Connection], Any]) -> None:
    for write in writes:
        await database.runner.write(write)


async def _ids(database: Database, column: sa.Column[Any]) -> set[Any]:
    return set(await database.runner.read(lambda conn: conn.scalars(sa.select(column)).all()))


async def _left(database: Database) -> dict[str, set[Any]]:
    return {
        "responses": await _ids(database, schema.responses.c.id),
        "items": await _ids(database, schema.items.c.response_id),
        "events": await _ids(database, schema.response_events.c.response_id),
        "jobs": await _ids(database, schema.jobs.c.id),
        "deliveries": await _ids(database, schema.webhook_deliveries.c.id),
        "audit": await _ids(database, schema.audit_logs.c.id),
        "request_log": await _ids(database, schema.request_log.c.id),
    }


async def test_deleting_a_response_takes_what_it_owns_as_the_sweep_does(
    database: Database,
) -> None:
    await _write(database, _response("resp_gone", NEW), _response("resp_kept", NEW))

    assert await database.responses.delete("resp_gone")
    assert not await database.responses.delete("resp_gone")

    left = await _left(database)
    assert (left["responses"], left["items"], left["events"]) == ({"resp_kept"},) * 3


async def test_the_old_of_each_kind_go_and_the_new_stay(database: Database) -> None:
    await _write(
        database,
        _response("resp_old", OLD),
        _response("resp_new", NEW),
        _job("job_old", OLD),
        _job("job_new", NEW),
        _delivery("wh_old", OLD),
        _delivery("wh_failed", OLD, "failed"),
        _delivery("wh_new", NEW),
        _audit("audit_old", OLD),
        _audit("audit_new", NEW),
        _logged("req_old", OLD),
        _logged("req_new", NEW),
    )

    swept = await RetentionSweep(database.retention, ALL_KINDS).sweep(NOW)

    assert await _left(database) == {
        "responses": {"resp_new"},
        "items": {"resp_new"},  # the old response's items went with it: no orphans
        "events": {"resp_new"},
        "jobs": {"job_new"},
        "deliveries": {"wh_new"},
        "audit": {"audit_new"},
        "request_log": {"req_new"},
    }
    assert {name: done.rows for name, done in swept.items()} == {
        "responses": 1,
        "response_events": 0,  # the old response's events went with it
        "jobs": 1,
        "webhook_deliveries": 2,
        "audit_logs": 1,
        "request_log": 1,
    }


async def test_what_is_still_going_is_never_deleted(database: Database) -> None:
    await _write(
        database,
        _response("resp_queued", OLD, "queued"),
        _response("resp_running", OLD, "in_progress"),
        _job("job_queued", OLD, "queued"),
        _job("job_running", OLD, "running"),
        _delivery("wh_pending", OLD, "pending"),
    )

    await RetentionSweep(database.retention, ALL_KINDS).sweep(NOW)

    left = await _left(database)
    assert left["responses"] == left["items"] == left["events"] == {"resp_queued", "resp_running"}
    assert left["jobs"] == {"job_queued", "job_running"}
    assert left["deliveries"] == {"wh_pending"}


async def test_events_of_ended_responses_go_before_the_responses_but_the_last(
    database: Database,
) -> None:
    settings = RetentionSettings(responses=0, response_events=AGE)
    await _write(
        database,
        _response("resp_old", OLD),
        _response("resp_running", OLD, "in_progress"),
        _response("resp_new", NEW),
    )

    swept = await RetentionSweep(database.retention, settings).sweep(NOW)

    events = schema.response_events.c
    left = await database.runner.read(
        lambda conn: set(conn.execute(sa.select(events.response_id, events.type)).all())
    )
    assert await _ids(database, schema.items.c.response_id) == {
        "resp_old",
        "resp_running",
        "resp_new",
    }
    assert left == {
        ("resp_old", "response.completed"),  # a replay gives the final response at once
        *((rid, kind) for rid in ("resp_running", "resp_new") for kind in KINDS_OF_EVENTS),
    }
    assert swept["response_events"] == Swept(rows=1, batches=1)


async def test_an_age_of_zero_keeps_forever(database: Database) -> None:
    await _write(database, _response("resp_ancient", 1.0), _audit("audit_ancient", 1.0))

    swept = await RetentionSweep(database.retention, RetentionSettings()).sweep(NOW)

    left = await _left(database)
    assert (left["responses"], left["audit"]) == ({"resp_ancient"}, {"audit_ancient"})
    assert swept["responses"] == swept["audit_logs"] == Swept()  # not even a statement


async def test_a_sweep_deletes_in_batches(database: Database) -> None:
    await _write(database, *(_audit(f"audit_{n}", OLD) for n in range(5)), _audit("keep", NEW))
    settings = RetentionSettings(audit_logs=AGE, batch_size=2)

    swept = await RetentionSweep(database.retention, settings).sweep(NOW)

    assert swept["audit_logs"] == Swept(rows=5, batches=3)  # 2 + 2 + 1
    assert await _ids(database, schema.audit_logs.c.id) == {"keep"}


async def test_reads_go_on_between_the_batches_of_a_sweep(database: Database) -> None:
    def many(conn: Connection) -> None:
        for n in range(400):
            _audit(f"audit_{n}", OLD)(conn)

    await database.runner.write(many)
    settings = RetentionSettings(audit_logs=AGE, batch_size=1)
    swept = anyio.Event()

    async def sweep() -> None:
        await RetentionSweep(database.retention, settings).sweep(NOW)
        swept.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(sweep)
        for _ in range(1000):  # a bound: reads until one sees the sweep part done
            left = len(await _ids(database, schema.audit_logs.c.id))
            if left < 400:
                break
        during = (left, swept.is_set())

    assert 0 < during[0] < 400  # a read between two batches: some rows gone, some not yet
    assert not during[1]
    assert await _ids(database, schema.audit_logs.c.id) == set()


async def test_a_projects_own_age_replaces_the_servers_for_its_responses(
    database: Database,
) -> None:
    await _write(
        database,
        _project("proj_forever", 0.0),
        _project("proj_brief", 50.0),
        _response("resp_forever", 1.0, project="proj_forever"),
        _response("resp_brief", NOW - 60, project="proj_brief"),
        _response("resp_brief_new", NOW - 40, project="proj_brief"),
        _response("resp_default_old", OLD),
        _response("resp_default_young", NOW - 60),
    )

    await RetentionSweep(database.retention, ALL_KINDS).sweep(NOW)

    assert await _ids(database, schema.responses.c.id) == {
        "resp_forever",
        "resp_brief_new",
        "resp_default_young",
    }


async def _schedules(database: Database) -> list[Any]:
    query = sa.select(schema.schedules.c.id, schema.schedules.c.every)
    return list(await database.runner.read(lambda conn: conn.execute(query).all()))


async def test_one_schedule_queues_the_sweep_once_across_processes(
    database: Database, database_url: str
) -> None:
    other = await Database.connect(database_url, instance_id=f"inst_{secrets.token_hex(4)}")
    try:
        for each in (database, other):
            await each.retention.schedule(60.0, NOW - 120)
        await other.retention.schedule(30.0, NOW - 120)  # a start with another period
        fired = [await database.schedules.fire(NOW), await other.schedules.fire(NOW)]
    finally:
        await other.aclose()

    assert await _schedules(database) == [("sched_retention", 30.0)]
    assert fired == [1, 0]
    assert await _ids(database, schema.jobs.c.kind) == {SWEEP_JOB}


async def _any_policy(_project: str) -> Policy:
    return Policy()


async def test_a_job_runner_runs_the_scheduled_sweep(database: Database) -> None:
    now = time.time()
    await _write(database, _audit("audit_old", now - 1000), _audit("audit_new", now))
    metrics = Metrics()
    settings = RetentionSettings(every=1.0, audit_logs=AGE)
    sweep = RetentionSweep(database.retention, settings, on_swept=metrics.swept)
    runner = JobRunner(
        database.jobs,
        instance_id=database.instance_id,
        settings=JobSettings(),
        policy=_any_policy,
        schedules=database.schedules,
    )
    runner.handle(SWEEP_JOB, sweep, limit=1)
    await sweep.schedule()
    counted = b'agentloom_retention_deleted_total{kind="audit_logs"} 1.0'

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(runner.run)
        for _ in range(100):  # a bound, not a timing: the first sweep comes in a second or two
            if counted in metrics.exposition():
                break
            await anyio.sleep(0.1)
        tasks.cancel_scope.cancel()

    assert counted in metrics.exposition()
    assert await _ids(database, schema.audit_logs.c.id) == {"audit_new"}


def test_the_documented_retention_is_the_default(tmp_path: Path) -> None:
    found = re.search(r"```toml\n(.*?)```", DOCS.read_text(), re.DOTALL)
    assert found is not None
    path = tmp_path / "agentloom.toml"
    path.write_text(found.group(1))

    documented = load_settings(path, env={}).retention
    from_env = load_settings(None, env={"AGENTLOOM_RETENTION_RESPONSES": "86400"}).retention

    assert documented == RetentionSettings()
    assert (documented.age("response_events"), documented.age("responses")) == (7 * 86_400, 0)
    assert from_env.responses == 86_400
