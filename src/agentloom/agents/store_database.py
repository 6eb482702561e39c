"""The database behind the SDK's stores (:class:`~agentloom.agents.sessions.SessionStore`,
:class:`~agentloom.agents.memory.MemoryStore`): the server's storage layer, so a store works on
a SQLite file or on PostgreSQL alike.

A store is given either a database URL (a SQLite file is ``sqlite:///PATH``), which it opens
and migrates on first use and closes in ``aclose``, or a :class:`Database` its caller opened,
migrated and closes (the server's, say).
"""

from __future__ import annotations

import asyncio
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentloom.storage.database import Database

__all__ = ["StoreDatabase"]


class StoreDatabase:
    """A database opened on first use from ``url`` (and owned), or the open ``database``."""

    def __init__(self, *, url: str | None = None, database: Database | None = None) -> None:
        if (url is None) == (database is None):
            raise ValueError("give a database URL or an open Database, not both")
        self.url = url  # None: the database was given
        self._database = database
        self._opening = asyncio.Lock()

    @classmethod
    def sqlite_file(cls, path: Path) -> StoreDatabase:
        return cls(url=f"sqlite:///{path}")

    async def get(self) -> Database:
        """The database (opened and migrated now if this is the first use)."""
        if self._database is not None:
            return self._database
        async with self._opening:
            if self._database is None:
                assert self.url is not None  # only a given database has no URL, and it is set
                self._database = await _open(self.url)
            return self._database

    async def aclose(self) -> None:
        """Close the database if it was opened here (it opens again on the next use)."""
        if self.url is None:
            return  # given: its owner closes it
        async with self._opening:
            database, self._database = self._database, None
        if database is not None:
            await database.aclose()


async def _open(url: str) -> Database:
    from agentloom.storage.database import Database  # the storage layer only when used

    database = await Database.connect(url, instance_id=f"sdk_{os.getpid()}_{secrets.token_hex(4)}")
    try:
        await database.migrate()
    except BaseException:
        await database.runner.aclose()
        raise
    return database
