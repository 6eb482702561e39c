"""Wake-ups across server processes: PostgreSQL ``LISTEN``/``NOTIFY``.

A writer that changes shared state calls :func:`notify` inside its transaction (PostgreSQL
delivers the notification when it commits; on SQLite it does nothing). A :class:`Listener`
holds one connection of its own, listening on every channel the process follows, and calls the
channel's callback with each notification's payload, and with ``""`` after every (re)connect,
since notifications sent while it was away are lost. Processes on SQLite have no such channel:
they poll, and wake each other only in-process.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping

import asyncpg  # type: ignore[import-untyped]
import sqlalchemy as sa
from sqlalchemy.engine import Connection, make_url

log = logging.getLogger(__name__)

RECONNECT_AFTER = 1.0  # seconds


def notify(conn: Connection, channel: str, payload: str = "") -> None:
    """Wake the listeners of ``channel`` when this transaction commits (PostgreSQL only)."""
    if conn.dialect.name == "postgresql":
        statement = sa.text("SELECT pg_notify(:channel, :payload)")
        conn.execute(statement, {"channel": channel, "payload": payload})


class Listener:
    def __init__(self, url: str, channels: Mapping[str, Callable[[str], None]]) -> None:
        self._dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
        self._channels = dict(channels)

    async def run(self) -> None:
        """Listen until cancelled, reconnecting after a failure."""
        while True:
            try:
                await self._listen()
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
                log.warning("lost the notification connection; reconnecting")
            await asyncio.sleep(RECONNECT_AFTER)

    async def _listen(self) -> None:
        conn = await asyncpg.connect(self._dsn, timeout=10)
        closed = asyncio.Event()
        try:
            conn.add_termination_listener(lambda _conn: closed.set())
            for channel, wake in self._channels.items():
                await conn.add_listener(channel, _caller(wake))
            for wake in self._channels.values():
                wake("")  # what changed while nobody listened: "" means "anything"
            await closed.wait()
        finally:
            if not conn.is_closed():
                await conn.close()


def _caller(wake: Callable[[str], None]) -> Callable[..., None]:
    """asyncpg calls a listener with (connection, pid, channel, payload)."""
    return lambda *args: wake(str(args[-1]))
