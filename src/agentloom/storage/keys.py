"""Sealing keys shared through the database: the first server process to start creates one;
every process (and every restart) then seals and opens with the same keys."""

from __future__ import annotations

import time

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.sealing import SealingKey
from agentloom.storage import schema
from agentloom.storage.runner import Runner

K = schema.sealing_keys
_KEYS_LOCK = 0x616C6B6579  # "alkey": pg_advisory_xact_lock key for creating the first key


async def sealing_keys(runner: Runner) -> list[SealingKey]:
    """Every stored key, newest first; one is created if there is none."""
    return await runner.write(_ensure)


def _ensure(conn: Connection) -> list[SealingKey]:
    if conn.dialect.name == "postgresql":  # processes starting together create one key, not two
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _KEYS_LOCK})
    keys = _load(conn)
    if not keys:
        key = SealingKey.new()
        conn.execute(K.insert().values(kid=key.kid, key=key.text(), created_at=time.time()))
        keys = [key]
    return keys


def _load(conn: Connection) -> list[SealingKey]:
    rows = conn.execute(sa.select(K.c.key).order_by(K.c.created_at.desc(), K.c.kid)).all()
    return [SealingKey.from_text(row.key) for row in rows]
