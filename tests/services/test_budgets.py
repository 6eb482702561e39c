"""Budgets: which scopes are over their hard limit, as read from the spend store."""

from __future__ import annotations

import asyncio
import time
from functools import partial

import pytest

from agentloom.errors import InsufficientQuotaError
from agentloom.services.organization.budgets import Budgets
from agentloom.storage.database import Database
from agentloom.storage.spend import (
    NANOS_PER_CENT,
    LimitRow,
    SpendState,
    SqlSpendStore,
    add_spend,
    month_of,
)


class HeldFirstRead(SqlSpendStore):
    """A spend store whose first read of the state is held (after reading) until released:
    a refresh that began before a limit was set and ends after the next one."""

    def __init__(self, database: Database) -> None:
        super().__init__(database.runner)
        self.read_once = asyncio.Event()
        self.release = asyncio.Event()

    async def state(self, period: int) -> SpendState:
        found = await super().state(period)
        if not self.read_once.is_set():
            self.read_once.set()
            await self.release.wait()
        return found


async def test_an_older_read_ending_last_does_not_lift_a_new_limit(database: Database) -> None:
    period = month_of(time.time())
    spent = {("proj_a", period): 500 * NANOS_PER_CENT}  # $5 this month
    await database.runner.write(partial(add_spend, spent=spent))
    store = HeldFirstRead(database)
    budgets = Budgets(store)

    older = asyncio.create_task(budgets.refresh())  # reads: no limit yet
    await store.read_once.wait()
    await store.set_limit(LimitRow("proj_a", 100), time.time())  # $1
    await budgets.refresh()
    over_after_the_newer = budgets.enforcing("proj_a")
    store.release.set()
    await older

    assert over_after_the_newer
    assert budgets.enforcing("proj_a")  # the older read, ending last, changed nothing
    with pytest.raises(InsufficientQuotaError, match="over its spend limit"):
        budgets.check("proj_a")
