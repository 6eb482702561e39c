"""Long-term memory for agents: notes kept by the storage layer (:mod:`agentloom.storage.memories`)
on a SQLite file or on PostgreSQL, searched by keywords.

Notes are namespaced (by session id, for the memory tools), persist across processes, and are
ranked by the keywords they share with the query (each weighted by how rare it is among the
namespace's notes), newest first on ties. A SQLite file's calls run in the storage layer's
threads, so the event loop never waits on the disk; a file written by earlier versions opens
as it is.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agentloom.agents.store_database import StoreDatabase
from agentloom.frozen import frozen
from agentloom.offload import off_loop
from agentloom.retrieval.keywords import terms

if TYPE_CHECKING:
    from agentloom.storage.database import Database
    from agentloom.storage.memories import MemoryRow, SqlMemoryStore

__all__ = ["Memory", "MemoryHit", "MemoryStore"]

LARGE_SEARCH = 500  # notes in a namespace from which a search ranks them off the loop


@frozen
class Memory:
    id: int
    namespace: str
    content: str
    created_at: float  # seconds since the epoch


@frozen
class MemoryHit:
    memory: Memory
    score: float  # higher is better; 0 for the recent notes an empty query returns


class MemoryStore:
    """Notes in one database:

    * ``MemoryStore(path)``: the SQLite file ``path``, created with its folder on first use;
    * ``MemoryStore.at(url)``: the database at ``url`` (``sqlite:///PATH``,
      ``postgresql://user@host:port/db``), migrated on first use;
    * ``MemoryStore.on(database)``: an open, migrated :class:`Database` (the server's, say).

    :meth:`aclose` closes a database the store opened (not one it was given).
    """

    def __init__(self, where: Path | StoreDatabase) -> None:
        self.path = where if isinstance(where, Path) else None  # the SQLite file, if given one
        self._database = (
            where if isinstance(where, StoreDatabase) else StoreDatabase.sqlite_file(where)
        )

    @classmethod
    def at(cls, url: str) -> MemoryStore:
        return cls(StoreDatabase(url=url))

    @classmethod
    def on(cls, database: Database) -> MemoryStore:
        return cls(StoreDatabase(database=database))

    async def aclose(self) -> None:
        await self._database.aclose()

    async def store(self, namespace: str, content: str) -> Memory:
        """Keep ``content`` under ``namespace``."""
        kept = " ".join(sorted(set(terms(content))))
        row = await (await self._rows()).insert(namespace, content, kept, now=time.time())
        return _memory(row)

    async def search(self, namespace: str, query: str, limit: int = 5) -> list[MemoryHit]:
        """The ``limit`` best notes for ``query``; an empty query gives the newest notes."""
        wanted = set(terms(query))
        if not wanted:
            return [MemoryHit(memory, 0.0) for memory in await self.recent(namespace, limit)]
        rows = await (await self._rows()).newest(namespace)
        ranked = await off_loop(len(rows) >= LARGE_SEARCH, _ranked, wanted, rows)
        return ranked[:limit]

    async def recent(self, namespace: str, limit: int = 5) -> list[Memory]:
        """The ``limit`` newest notes of ``namespace``, newest first."""
        return [_memory(row) for row in await (await self._rows()).newest(namespace, limit)]

    async def _rows(self) -> SqlMemoryStore:
        return (await self._database.get()).memories


def _memory(row: MemoryRow) -> Memory:
    return Memory(row.id, row.namespace, row.content, row.created_at)


def _ranked(wanted: set[str], rows: Sequence[MemoryRow]) -> list[MemoryHit]:
    """The notes sharing a keyword with the query, best first (newest first on ties)."""
    kept = [set(row.terms.split()) for row in rows]
    weights = _weights(wanted, kept)
    scored = [
        MemoryHit(_memory(row), sum(weights[t] for t in wanted & words))
        for row, words in zip(rows, kept, strict=True)
    ]
    matching = [hit for hit in scored if hit.score > 0]
    matching.sort(key=lambda hit: (-hit.score, -hit.memory.id))
    return matching


def _weights(wanted: set[str], documents: Sequence[set[str]]) -> dict[str, float]:
    """An idf weight per query term: rare terms count for more than common ones."""
    frequency = Counter(term for kept in documents for term in wanted & kept)
    total = len(documents)
    return {term: math.log(1 + (total + 1) / (frequency[term] + 0.5)) for term in wanted}
