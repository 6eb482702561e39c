"""A project's webhook endpoints, and the deliveries of its events to them.

An event is announced once per endpoint that wants its type: a delivery row (the body every
attempt sends) and the job that sends it, written in one transaction. Their ids are derived
from the event's and the endpoint's, so announcing the same event again (a job that ended just
before its process died, run again) adds nothing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.frozen import field_names, frozen
from agentloom.storage import schema
from agentloom.storage.base import Page
from agentloom.storage.jobs import JobRow, enqueue
from agentloom.storage.pages import keyset_page
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import Project, ProjectRunner

E = schema.webhook_endpoints
D = schema.webhook_deliveries
DELIVERY_JOB = "webhook"  # the kind of the jobs that send deliveries


@frozen
class EndpointRow:
    id: str
    name: str
    url: str
    event_types: str  # a JSON list
    secret: str  # sealed
    secret_hint: str
    created_at: float
    updated_at: float
    old_secret: str | None = None
    old_secret_until: float | None = None

    @property
    def types(self) -> list[str]:
        types: list[str] = json.loads(self.event_types)
        return types


@frozen
class DeliveryRow:
    id: str
    endpoint_id: str
    event_id: str
    event_type: str
    body: str
    status: str  # pending, delivered, failed
    attempts: str  # a JSON list of attempts
    created_at: float
    next_attempt_at: float | None = None
    ended_at: float | None = None


@frozen
class Event:
    """Something that happened in a project, as its webhooks send it."""

    id: str
    type: str
    body: str
    created_at: float


_ENDPOINT = tuple(E.c[name] for name in field_names(EndpointRow))
_DELIVERY = tuple(D.c[name] for name in field_names(DeliveryRow))


class SqlWebhookStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = ProjectRunner(runner)

    async def create(self, row: EndpointRow) -> None:
        await self._runner.write(partial(_create, row))

    async def get(self, endpoint_id: str) -> EndpointRow | None:
        return await self._runner.read(partial(_get, endpoint_id))

    async def list_page(self, after: str | None, limit: int) -> Page[EndpointRow] | None:
        """Newest first; ``None`` when ``after`` is not one of the project's endpoints."""
        return await self._runner.read(partial(_list, after, limit))

    async def update(self, endpoint_id: str, values: dict[str, Any]) -> EndpointRow | None:
        return await self._runner.write(partial(_update, endpoint_id, values))

    async def delete(self, endpoint_id: str) -> bool:
        return await self._runner.write(partial(_delete, endpoint_id))

    async def announce(self, event: Event, key_id: str | None) -> int:
        """Queue a delivery of ``event`` to each endpoint that wants it; how many were new."""
        return await self._runner.write(partial(_announce, event, key_id))

    async def delivery(self, delivery_id: str) -> DeliveryRow | None:
        return await self._runner.read(partial(_delivery, delivery_id))

    async def record(
        self, delivery_id: str, attempt: dict[str, Any] | None, values: dict[str, Any]
    ) -> None:
        """Add ``attempt`` (if any) to the delivery's list and set ``values`` (its status ...)."""
        write = partial(_record, delivery_id, attempt, values)
        await self._runner.write(write)

    async def deliveries(
        self, endpoint_id: str, after: str | None, limit: int
    ) -> Page[DeliveryRow] | None:
        """The endpoint's deliveries, newest first."""
        query = partial(_deliveries, endpoint_id, after, limit)
        return await self._runner.read(query)


def _create(row: EndpointRow, project: Project, conn: Connection) -> None:
    conn.execute(project.insert(E).values(**asdict(row)))


def _endpoint(row: Any) -> EndpointRow:
    return EndpointRow(*(getattr(row, c.name) for c in _ENDPOINT))


def _delivery_row(row: Any) -> DeliveryRow:
    return DeliveryRow(*(getattr(row, c.name) for c in _DELIVERY))


def _owned(project: Project, endpoint_id: str) -> sa.ColumnElement[bool]:
    return project.rows(E, E.c.id == endpoint_id)


def _get(endpoint_id: str, project: Project, conn: Connection) -> EndpointRow | None:
    row = conn.execute(sa.select(*_ENDPOINT).where(_owned(project, endpoint_id))).first()
    return None if row is None else _endpoint(row)


def _list(
    after: str | None, limit: int, project: Project, conn: Connection
) -> Page[EndpointRow] | None:
    cursor = None
    if after is not None:
        cursor = conn.scalar(sa.select(E.c.seq).where(_owned(project, after)))
        if cursor is None:
            return None
    query = sa.select(*_ENDPOINT).where(project.rows(E))
    return keyset_page(conn, query, E.c.seq, order="desc", limit=limit, row=_endpoint, after=cursor)


def _update(
    endpoint_id: str, values: dict[str, Any], project: Project, conn: Connection
) -> EndpointRow | None:
    if values:
        conn.execute(project.update(E, E.c.id == endpoint_id).values(**values))
    return _get(endpoint_id, project, conn)


def _delete(endpoint_id: str, project: Project, conn: Connection) -> bool:
    return conn.execute(project.delete(E, E.c.id == endpoint_id)).rowcount > 0


def _announce(event: Event, key_id: str | None, project: Project, conn: Connection) -> int:
    query = sa.select(E.c.id, E.c.event_types).where(project.rows(E))
    wanting = [r.id for r in conn.execute(query) if event.type in json.loads(r.event_types)]
    ids = {endpoint: _derived(event.id, endpoint) for endpoint in wanting}
    if not ids:
        return 0
    known = set(
        conn.scalars(sa.select(D.c.id).where(project.rows(D, D.c.id.in_(list(ids.values())))))
    )
    added = 0
    for endpoint, delivery_id in ids.items():
        if delivery_id in known:
            continue
        conn.execute(
            project.insert(D).values(
                id=delivery_id,
                endpoint_id=endpoint,
                event_id=event.id,
                event_type=event.type,
                body=event.body,
                status="pending",
                created_at=event.created_at,
            )
        )
        job = JobRow(
            id="job_" + delivery_id.removeprefix("wh_"),
            project_id=project.id,
            kind=DELIVERY_JOB,
            subject=delivery_id,
            key_id=key_id,
            payload="{}",
            created_at=event.created_at,
        )
        enqueue(job, conn)
        added += 1
    return added


def _derived(event_id: str, endpoint_id: str) -> str:
    """The delivery of one event to one endpoint: the same id however often it is announced."""
    digest = hashlib.sha256(f"{event_id}/{endpoint_id}".encode()).hexdigest()
    return "wh_" + digest[:32]


def _delivery(delivery_id: str, project: Project, conn: Connection) -> DeliveryRow | None:
    mine = project.rows(D, D.c.id == delivery_id)
    row = conn.execute(sa.select(*_DELIVERY).where(mine)).first()
    return None if row is None else _delivery_row(row)


def _record(
    delivery_id: str,
    attempt: dict[str, Any] | None,
    values: dict[str, Any],
    project: Project,
    conn: Connection,
) -> None:
    mine = project.rows(D, D.c.id == delivery_id)
    attempts = conn.scalar(sa.select(D.c.attempts).where(mine))
    if attempts is None:
        return
    listed = [*json.loads(attempts), *([attempt] if attempt is not None else [])]
    conn.execute(D.update().where(mine).values(attempts=json.dumps(listed), **values))


def _deliveries(
    endpoint_id: str, after: str | None, limit: int, project: Project, conn: Connection
) -> Page[DeliveryRow] | None:
    mine = project.rows(D, D.c.endpoint_id == endpoint_id)
    cursor = None
    if after is not None:
        cursor = conn.scalar(sa.select(D.c.seq).where(mine, D.c.id == after))
        if cursor is None:
            return None
    query = sa.select(*_DELIVERY).where(mine)
    return keyset_page(
        conn, query, D.c.seq, order="desc", limit=limit, row=_delivery_row, after=cursor
    )
