"""The admin API's spend limits and alerts (``/v1/organization/spend_limit``,
``/v1/organization/spend_alerts`` and a project's own), in OpenAI's shapes.

A scope is the organization (:data:`~agentloom.storage.spend.ORGANIZATION`) or a project,
which must exist. A change is enforced by this process at once (it refreshes its budgets) and
by the others within their next refresh.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from agentloom.api.lists import ListPage
from agentloom.api.spend import (
    CreateSpendAlertRequest,
    Enforcement,
    NotificationChannel,
    SpendAlert,
    SpendAlertDeleted,
    SpendLimit,
    SpendLimitDeleted,
    UpdateSpendLimitRequest,
)
from agentloom.errors import NotFoundError
from agentloom.ids import new_id
from agentloom.services.organization.budgets import Budgets
from agentloom.storage.base import Order
from agentloom.storage.spend import ORGANIZATION, AlertRow, LimitRow

__all__ = ["SpendAdmin"]


def _kind(scope: str) -> str:
    return "organization" if scope == ORGANIZATION else "project"


class SpendAdmin:
    def __init__(self, budgets: Budgets, project: Callable[[str], Awaitable[object]]) -> None:
        """``project``: raises the 404 of a project that does not exist."""
        self._budgets = budgets
        self._store = budgets.store
        self._project = project

    async def scope(self, project_id: str | None) -> str:
        """The organization's scope (``None``), or the project's once it is known to exist."""
        if project_id is None:
            return ORGANIZATION
        await self._project(project_id)
        return project_id

    # --- the hard limit --------------------------------------------------------------------

    async def limit(self, scope: str) -> SpendLimit:
        row = await self._store.limit(scope)
        if row is None:
            raise NotFoundError(f"No spend limit is set for the {_whose(scope)}.")
        await self._budgets.refresh()
        return self._limit(row)

    async def set_limit(self, scope: str, request: UpdateSpendLimitRequest) -> SpendLimit:
        row = LimitRow(scope, request.threshold_amount, request.currency, request.interval)
        await self._store.set_limit(row, time.time())
        await self._budgets.refresh()
        return self._limit(row)

    async def delete_limit(self, scope: str) -> SpendLimitDeleted:
        if not await self._store.delete_limit(scope):
            raise NotFoundError(f"No spend limit is set for the {_whose(scope)}.")
        await self._budgets.refresh()
        return SpendLimitDeleted.model_validate({"object": f"{_kind(scope)}.spend_limit.deleted"})

    def _limit(self, row: LimitRow) -> SpendLimit:
        enforcing = self._budgets.enforcing(row.scope)
        return SpendLimit.model_validate(
            {
                "object": f"{_kind(row.scope)}.spend_limit",
                "threshold_amount": row.threshold_amount,
                "enforcement": Enforcement(status="enforcing" if enforcing else "inactive"),
            }
        )

    # --- alerts ----------------------------------------------------------------------------

    async def create_alert(self, scope: str, request: CreateSpendAlertRequest) -> SpendAlert:
        row = AlertRow(
            id=new_id("spalert"),
            scope=scope,
            threshold_amount=request.threshold_amount,
            channel=request.notification_channel.model_dump(exclude_none=True),
            created_at=time.time(),
        )
        await self._store.create_alert(row)
        return _alert(row)

    async def alert(self, scope: str, alert_id: str) -> SpendAlert:
        return _alert(await self._alert_row(scope, alert_id))

    async def update_alert(
        self, scope: str, alert_id: str, request: CreateSpendAlertRequest
    ) -> SpendAlert:
        row = await self._alert_row(scope, alert_id)
        channel = request.notification_channel.model_dump(exclude_none=True)
        changed = AlertRow(
            row.id, scope, request.threshold_amount, channel, created_at=row.created_at
        )
        if not await self._store.update_alert(changed):
            raise _no_alert(alert_id)
        return _alert(changed)

    async def delete_alert(self, scope: str, alert_id: str) -> SpendAlertDeleted:
        if not await self._store.delete_alert(scope, alert_id):
            raise _no_alert(alert_id)
        deleted = {"id": alert_id, "object": f"{_kind(scope)}.spend_alert.deleted"}
        return SpendAlertDeleted.model_validate(deleted)

    async def alerts(
        self, scope: str, after: str | None, before: str | None, limit: int, order: Order
    ) -> ListPage[SpendAlert]:
        page = await self._store.alerts(scope, after, before, limit, order)
        if page is None:
            raise NotFoundError(f"No spend alert found with id '{after or before}'.", param="after")
        return ListPage.of([_alert(row) for row in page.data], has_more=page.has_more)

    async def _alert_row(self, scope: str, alert_id: str) -> AlertRow:
        row = await self._store.alert(scope, alert_id)
        if row is None:
            raise _no_alert(alert_id)
        return row


def _alert(row: AlertRow) -> SpendAlert:
    return SpendAlert.model_validate(
        {
            "id": row.id,
            "object": f"{_kind(row.scope)}.spend_alert",
            "notification_channel": NotificationChannel.model_validate(row.channel),
            "threshold_amount": row.threshold_amount,
        }
    )


def _whose(scope: str) -> str:
    return "organization" if scope == ORGANIZATION else f"project '{scope}'"


def _no_alert(alert_id: str) -> NotFoundError:
    return NotFoundError(f"No spend alert found with id '{alert_id}'.", param="alert_id")
