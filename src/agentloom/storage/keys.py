"""Sealing keys shared through the database: the first server process to start creates one;
every process (and every restart) then seals and opens with the same keys.

Processes that start together on an empty database each try to create the first key under the
same key id (``initial``): the database keeps exactly one, and every process reads that one back.
"""

from __future__ import annotations

import time

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.sealing import SealingKey
from agentloom.storage import schema
from agentloom.storage.runner import Runner
from agentloom.storage.upsert import insert as upsert

K = schema.sealing_keys
INITIAL = "initial"


async def sealing_keys(runner: Runner) -> list[SealingKey]:
    """Every stored key, newest first; the first one is created if there is none."""
    keys = await runner.read(_load)
    if keys:
        return keys
    await runner.write(_create_initial)
    return await runner.read(_load)


def _create_initial(conn: Connection) -> None:
    key = SealingKey.new(kid=INITIAL)
    values = {"kid": key.kid, "key": key.text(), "created_at": time.time()}
    insert = upsert(conn, K)
    conn.execute(insert.values(**values).on_conflict_do_nothing(index_elements=[K.c.kid]))


def _load(conn: Connection) -> list[SealingKey]:
    rows = conn.execute(sa.select(K.c.kid, K.c.key).order_by(K.c.created_at.desc(), K.c.kid))
    return [SealingKey.from_text(row.key, kid=row.kid) for row in rows]
