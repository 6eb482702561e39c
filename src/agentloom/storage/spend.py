"""Spend: the hard limits and alerts of the organization and its projects, and what each
project spent a calendar month (UTC).

A limit or an alert belongs to a *scope*: :data:`ORGANIZATION`, or a project's id. Amounts
set by an administrator are in cents (OpenAI's ``threshold_amount``); spend is counted in
nano-dollars, added by every server process when it writes its usage
(:func:`add_spend`, in the same transaction), so the month's total is one row a project.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import partial
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.frozen import frozen
from agentloom.storage import schema
from agentloom.storage.base import Order, Page
from agentloom.storage.pages import keyset_page
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import across_projects
from agentloom.storage.upsert import insert as upsert

__all__ = [
    "NANOS_PER_CENT",
    "ORGANIZATION",
    "AlertRow",
    "LimitRow",
    "SpendState",
    "SqlSpendStore",
    "add_spend",
    "month_of",
]

L = schema.spend_limits
A = schema.spend_alerts
T = schema.spend_totals
ORGANIZATION: Final = "organization"
NANOS_PER_CENT: Final = 10_000_000


def month_of(at: float) -> int:
    """The start (unix seconds) of the UTC calendar month ``at`` falls in."""
    moment = datetime.fromtimestamp(at, UTC)
    return int(datetime(moment.year, moment.month, 1, tzinfo=UTC).timestamp())


@frozen
class LimitRow:
    scope: str
    threshold_amount: int  # cents
    currency: str = "USD"
    interval: str = "month"


@frozen
class AlertRow:
    id: str
    scope: str
    threshold_amount: int  # cents
    channel: dict[str, Any]  # the notification channel, as it was given
    currency: str = "USD"
    interval: str = "month"
    created_at: float = 0.0
    fired_period: int | None = None


@frozen
class SpendState:
    """Everything the budgets enforce in one month: limits, alerts and each project's spend."""

    limits: Mapping[str, int]  # cents, by scope
    alerts: tuple[AlertRow, ...]
    spent: Mapping[str, int]  # nano-dollars, by project

    def scope_spend(self, scope: str) -> int:
        """Nano-dollars spent by the scope (the organization: every project)."""
        if scope == ORGANIZATION:
            return sum(self.spent.values())
        return self.spent.get(scope, 0)


class SqlSpendStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    # --- limits --------------------------------------------------------------------------

    async def limit(self, scope: str) -> LimitRow | None:
        return await self._runner.read(partial(_limit, scope))

    async def set_limit(self, row: LimitRow, now: float) -> None:
        await self._runner.write(partial(_set_limit, row, now))

    async def delete_limit(self, scope: str) -> bool:
        return await self._runner.write(partial(_delete_limit, scope))

    # --- alerts --------------------------------------------------------------------------

    async def create_alert(self, row: AlertRow) -> None:
        await self._runner.write(partial(_create_alert, row))

    async def alert(self, scope: str, alert_id: str) -> AlertRow | None:
        return await self._runner.read(partial(_alert, scope, alert_id))

    async def update_alert(self, row: AlertRow) -> bool:
        """Replace the alert's threshold and channel (it may fire again this month)."""
        return await self._runner.write(partial(_update_alert, row))

    async def delete_alert(self, scope: str, alert_id: str) -> bool:
        return await self._runner.write(partial(_delete_alert, scope, alert_id))

    async def alerts(
        self, scope: str, after: str | None, before: str | None, limit: int, order: Order
    ) -> Page[AlertRow] | None:
        """A page of the scope's alerts; ``None`` when ``after`` / ``before`` is no alert."""
        page = partial(_alerts, scope, after, before, limit, order)
        return await self._runner.read(page)

    async def claim_alert(self, alert_id: str, period: int) -> bool:
        """Whether this call is the first to fire the alert for the month ``period``."""
        return await self._runner.write(partial(_claim_alert, alert_id, period))

    # --- what is enforced ------------------------------------------------------------------

    async def state(self, period: int) -> SpendState:
        return await self._runner.read(partial(_state, period))


def add_spend(conn: Connection, spent: Mapping[tuple[str, int], int]) -> None:
    """Add nano-dollars to projects' months (``spent``: by project and month start)."""
    for (project_id, period), amount in spent.items():
        row = upsert(conn, T).values(project_id=project_id, period=period, amount=amount)
        statement = row.on_conflict_do_update(
            index_elements=[T.c.project_id, T.c.period], set_={"amount": T.c.amount + amount}
        )
        conn.execute(across_projects(statement))


def _limit(scope: str, conn: Connection) -> LimitRow | None:
    row = conn.execute(sa.select(L).where(L.c.scope == scope)).first()
    return None if row is None else LimitRow(row.scope, row.threshold_amount)


def _set_limit(row: LimitRow, now: float, conn: Connection) -> None:
    values = {
        "scope": row.scope,
        "threshold_amount": row.threshold_amount,
        "currency": row.currency,
        "interval": row.interval,
        "updated_at": now,
    }
    statement = upsert(conn, L).values(**values)
    changes = {k: statement.excluded[k] for k in values if k != "scope"}
    conn.execute(statement.on_conflict_do_update(index_elements=[L.c.scope], set_=changes))


def _delete_limit(scope: str, conn: Connection) -> bool:
    return bool(conn.execute(L.delete().where(L.c.scope == scope)).rowcount)


def _alert_row(row: Any) -> AlertRow:
    return AlertRow(
        id=row.id,
        scope=row.scope,
        threshold_amount=row.threshold_amount,
        channel=json.loads(row.channel),
        currency=row.currency,
        interval=row.interval,
        created_at=row.created_at,
        fired_period=row.fired_period,
    )


def _create_alert(row: AlertRow, conn: Connection) -> None:
    conn.execute(
        A.insert().values(
            id=row.id,
            scope=row.scope,
            threshold_amount=row.threshold_amount,
            currency=row.currency,
            interval=row.interval,
            channel=json.dumps(row.channel),
            created_at=row.created_at,
        )
    )


def _alert(scope: str, alert_id: str, conn: Connection) -> AlertRow | None:
    row = conn.execute(sa.select(A).where(A.c.scope == scope, A.c.id == alert_id)).first()
    return None if row is None else _alert_row(row)


def _update_alert(row: AlertRow, conn: Connection) -> bool:
    statement = (
        A.update()
        .where(A.c.scope == row.scope, A.c.id == row.id)
        .values(
            threshold_amount=row.threshold_amount,
            channel=json.dumps(row.channel),
            fired_period=None,
        )
    )
    return bool(conn.execute(statement).rowcount)


def _delete_alert(scope: str, alert_id: str, conn: Connection) -> bool:
    return bool(conn.execute(A.delete().where(A.c.scope == scope, A.c.id == alert_id)).rowcount)


def _seq(scope: str, alert_id: str | None, conn: Connection) -> int | None:
    if alert_id is None:
        return None
    found = conn.execute(sa.select(A.c.seq).where(A.c.scope == scope, A.c.id == alert_id))
    return found.scalar()


def _alerts(
    scope: str,
    after: str | None,
    before: str | None,
    limit: int,
    order: Order,
    conn: Connection,
) -> Page[AlertRow] | None:
    after_seq, before_seq = _seq(scope, after, conn), _seq(scope, before, conn)
    if (after is not None and after_seq is None) or (before is not None and before_seq is None):
        return None
    query = sa.select(A).where(A.c.scope == scope)
    return keyset_page(
        conn,
        query,
        A.c.seq,
        order=order,
        limit=limit,
        row=_alert_row,
        after=after_seq,
        before=before_seq,
    )


def _claim_alert(alert_id: str, period: int, conn: Connection) -> bool:
    unfired = sa.or_(A.c.fired_period.is_(None), A.c.fired_period != period)
    statement = A.update().where(A.c.id == alert_id, unfired).values(fired_period=period)
    return bool(conn.execute(statement).rowcount)


def _state(period: int, conn: Connection) -> SpendState:
    limits = {row.scope: int(row.threshold_amount) for row in conn.execute(sa.select(L))}
    alerts = tuple(_alert_row(row) for row in conn.execute(sa.select(A).order_by(A.c.seq)))
    if not limits and not alerts:
        return SpendState({}, (), {})  # nothing enforced: the totals are not read
    totals = across_projects(sa.select(T.c.project_id, T.c.amount)).where(T.c.period == period)
    spent = {row.project_id: int(row.amount) for row in conn.execute(totals)}
    return SpendState(limits, alerts, spent)
