"""The managed agents' store on SQLite and PostgreSQL: a turn's one read (on the driver itself),
queued messages taken by one run, and a deletion that leaves nothing of the agent behind."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from functools import partial

import pytest

from agentloom.errors import InvalidRequestError
from agentloom.storage import schema
from agentloom.storage.database import Database
from agentloom.storage.managed_agents import AgentRow, MessageRow, take_queued
from agentloom.storage.runner import scalar_count
from agentloom.storage.scoped import Project
from agentloom.tenancy import acting_for

NOW = 1_760_000_000.0


def agent(agent_id: str = "magent_1") -> AgentRow:
    return AgentRow(agent_id, "a", "simple", '{"model": "m"}', "idle", NOW, NOW)


def message(n: int, status: str = "delivered", direction: str = "user_to_agent") -> MessageRow:
    return MessageRow(f"amsg_{n}", "magent_1", direction, f"said {n}", "queued", status, NOW + n)


async def test_a_turn_reads_the_agent_and_its_latest_conversation(database: Database) -> None:
    store = database.managed_agents
    with acting_for("proj_a"):
        await store.create(agent())
        empty = await store.turn_context("magent_1", 3)
        for n in range(5):
            await store.add_message(message(n))
        await store.add_message(message(5, status="pending"))  # not taken yet: not seen
        found = await store.turn_context("magent_1", 3)
        none = await store.turn_context("magent_1", 0)
        missing = await store.turn_context("magent_2", 3)
    with acting_for("proj_b"):
        other = await store.turn_context("magent_1", 3)

    assert empty == (agent(), [])
    assert found is not None
    assert found[0] == agent()
    assert [m.content for m in found[1]] == ["said 2", "said 3", "said 4"]
    assert found[1][0] == message(2)
    assert none == (agent(), [])
    assert missing is None
    assert other is None  # another project's agent


async def test_queued_messages_go_to_one_run(database: Database) -> None:
    store = database.managed_agents
    with acting_for("proj_a"):
        await store.create(agent())
        await store.add_message(message(0))
        await store.add_message(message(1, status="pending"))
        await store.add_message(message(2, status="pending"))
        first = await database.runner.write(
            partial(take_queued, "magent_1", "arun_1", 10, Project("proj_a"))
        )

    assert [m.content for m in first.messages] == ["said 1", "said 2"]
    assert [m.content for m in first.history] == ["said 0"]
    assert {m.run_id for m in first.messages} == {"arun_1"}


async def test_deleting_an_agent_leaves_nothing_of_it(database: Database) -> None:
    store = database.managed_agents
    with acting_for("proj_a"):
        await store.create(agent())
        await store.add_message(message(0))
        await database.agent_sessions.save_history("magent_1", "magent_1", "[]", now=time.time())
        assert await store.delete("magent_1")
        assert not await store.delete("magent_1")

    for table in (schema.managed_agents, schema.managed_agent_messages, schema.agent_sessions):
        assert await database.runner.read(scalar_count(table)) == 0


async def test_text_postgresql_cannot_hold_is_a_400(postgres_url: str) -> None:
    """PostgreSQL only: SQLite holds a NUL."""
    database = await Database.connect(postgres_url, instance_id="inst_nul")
    try:
        await database.migrate()
        before = await database.runner.read(scalar_count(schema.managed_agents))
        with acting_for("proj_a"), pytest.raises(InvalidRequestError):
            await database.managed_agents.turn_context("magent_\x00", 3)
        assert await database.runner.read(scalar_count(schema.managed_agents)) == before
    finally:
        await database.aclose()


async def test_a_messages_lazy_commit_stays_in_its_own_transaction(postgres_url: str) -> None:
    """PostgreSQL only (SQLite has no such setting): the message's insert turns
    ``synchronous_commit`` off for itself alone; every pooled connection still commits as
    usual afterwards."""
    database = await Database.connect(postgres_url, instance_id="inst_lazy")
    said = [replace(message(n), id=f"amsg_lazy_{n}", agent_id="magent_lazy") for n in range(8)]
    try:
        await database.migrate()
        store = database.managed_agents
        with acting_for("proj_a"):
            await store.create(agent("magent_lazy"))
            for row in said:
                await store.add_message(row)
            shown = await asyncio.gather(
                *(database.runner.fetch("SHOW synchronous_commit") for _ in range(8))
            )
            found = await store.turn_context("magent_lazy", 8)
            await store.delete("magent_lazy")
    finally:
        await database.aclose()

    assert {row[0][0] for row in shown} == {"on"}
    assert found is not None
    assert found[1] == said
