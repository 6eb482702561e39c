"""Budgets: hard spend limits and spend alerts, of the organization and of each project.

What a month cost is what the usage ledger priced and wrote (:mod:`agentloom.storage.spend`,
one total a project and month, added by every process). Every ``interval`` (the usage
flush's) a process reads the limits, the alerts and the month's totals in one read and keeps
which projects are over a hard limit: a request of the traffic from such a project, or any
when the organization is over its own, is refused at the edge with OpenAI's 429
``insufficient_quota``, without touching the database. An alert whose threshold the month's
spend reached is sent once a month (whichever process claims it first) as a signed webhook
event (:data:`~agentloom.api.webhooks.SPEND_ALERT_EVENT`). Spend recorded since the last flush
is not counted yet: a project can go over its limit by what its requests in flight cost.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Protocol

import anyio

from agentloom.errors import InsufficientQuotaError
from agentloom.storage.connection_faults import DATABASE_FAULTS
from agentloom.storage.spend import (
    NANOS_PER_CENT,
    ORGANIZATION,
    AlertRow,
    SpendState,
    SqlSpendStore,
    month_of,
)

__all__ = ["AlertSink", "Budgets"]

log = logging.getLogger(__name__)

_OVER = (
    "You exceeded your current quota, please check your plan and billing details: {whose} is"
    " over its spend limit for the month (${spent:.2f} of ${limit:.2f})."
)


class AlertSink(Protocol):
    async def spend_alert(self, alert: AlertRow, spent: int, period: int) -> None:
        """Tell the alert's scope that it spent ``spent`` nano-dollars in month ``period``."""


class Budgets:
    def __init__(
        self,
        store: SqlSpendStore,
        sink: AlertSink | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._sink = sink
        self._clock = clock
        self._state = SpendState({}, (), {})
        self._over: frozenset[str] = frozenset()  # scopes over their hard limit
        # Reads may overlap (the timer's, a changed limit's): one that began earlier and ended
        # later must not put back what the later one replaced.
        self._reads_begun = 0
        self._read_kept = 0

    @property
    def store(self) -> SqlSpendStore:
        return self._store

    def check(self, project_id: str) -> None:
        """Refuse a request of ``project_id`` when it, or the organization, is over its limit."""
        if not self._over:
            return
        for scope in (ORGANIZATION, project_id):
            if scope in self._over:
                raise self._refusal(scope)

    def enforcing(self, scope: str) -> bool:
        return scope in self._over

    async def refresh(self) -> None:
        """Read what is enforced now; send the alerts the month's spend reached."""
        period = month_of(self._clock())
        self._reads_begun += 1
        ticket = self._reads_begun
        state = await self._store.state(period)
        if ticket < self._read_kept:
            return  # a read begun after this one has been kept: this one is older
        self._read_kept = ticket
        self._state = state
        self._over = frozenset(
            scope
            for scope, cents in state.limits.items()
            if state.scope_spend(scope) >= cents * NANOS_PER_CENT
        )
        for alert in state.alerts:
            await self._maybe_fire(alert, state, period)

    async def run(self, interval: float) -> None:
        """Refresh every ``interval`` seconds for the life of the server."""
        while True:
            try:
                await self.refresh()
            except DATABASE_FAULTS:
                log.warning("could not read the spend limits; retrying", exc_info=True)
            await anyio.sleep(interval)

    async def _maybe_fire(self, alert: AlertRow, state: SpendState, period: int) -> None:
        spent = state.scope_spend(alert.scope)
        if alert.fired_period == period or spent < alert.threshold_amount * NANOS_PER_CENT:
            return
        if self._sink is None or not await self._store.claim_alert(alert.id, period):
            return
        await self._sink.spend_alert(alert, spent, period)

    def _refusal(self, scope: str) -> InsufficientQuotaError:
        whose = "the organization" if scope == ORGANIZATION else f"project '{scope}'"
        spent = self._state.scope_spend(scope) / (NANOS_PER_CENT * 100)
        limit = self._state.limits.get(scope, 0) / 100
        return InsufficientQuotaError(_OVER.format(whose=whose, spent=spent, limit=limit))
