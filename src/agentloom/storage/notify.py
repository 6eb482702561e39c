"""Wake-ups across server processes: PostgreSQL ``LISTEN``/``NOTIFY``.

A writer that changes shared state calls :func:`notify` inside its transaction (PostgreSQL
delivers the notification when it commits; on SQLite it does nothing). A :class:`Listener`
holds one connection of its own listening on the channel and calls ``wake`` for each
notification, and once after every (re)connect, since notifications sent while it was away are
lost. Processes on SQLite have no such channel and poll instead.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import asyncpg  # type: ignore[import-untyped]
import sqlalchemy as sa
from sqlalchemy.engine import Connection, make_url

log = logging.getLogger(__name__)

RECONNECT_AFTER = 1.0  # seconds


def notify(conn: Connection, channel: str) -> None:
    """Wake the listeners of ``channel`` when this transaction commits (PostgreSQL only)."""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("SELECT pg_notify(:channel, '')"), {"channel": channel})


class Listener:
    def __init__(self, url: str, channel: str) -> None:
        self._dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
        self._channel = channel

    async def run(self, wake: Callable[[], None]) -> None:
        """Listen until cancelled, reconnecting after a failure."""
        while True:
            try:
                await self._listen(wake)
            except (TimeoutError, OSError, asyncpg.PostgresError):
                log.warning("lost the %s notification channel; reconnecting", self._channel)
            await asyncio.sleep(RECONNECT_AFTER)

    async def _listen(self, wake: Callable[[], None]) -> None:
        conn = await asyncpg.connect(self._dsn, timeout=10)
        closed = asyncio.Event()
        try:
            conn.add_termination_listener(lambda _conn: closed.set())
            await conn.add_listener(self._channel, lambda *_args: wake())
            wake()  # what changed while nobody listened
            await closed.wait()
        finally:
            if not conn.is_closed():
                await conn.close()
