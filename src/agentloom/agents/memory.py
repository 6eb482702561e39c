"""Long-term memory for agents: notes kept in a SQLite file, searched by keywords.

Notes are namespaced (by session id, for the memory tools), persist across processes, and are
ranked by the keywords they share with the query (each weighted by how rare it is among the
namespace's notes), newest first on ties. Every database call runs in a worker thread on its
own short-lived connection, so the event loop never waits on the disk.
"""

from __future__ import annotations

import asyncio
import math
import sqlite3
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from agentloom.retrieval.keywords import terms

__all__ = ["Memory", "MemoryHit", "MemoryStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    namespace TEXT NOT NULL,
    content TEXT NOT NULL,
    terms TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_namespace ON memories (namespace, id);
"""


@dataclass(frozen=True, slots=True)
class Memory:
    id: int
    namespace: str
    content: str
    created_at: float  # seconds since the epoch


@dataclass(frozen=True, slots=True)
class MemoryHit:
    memory: Memory
    score: float  # higher is better; 0 for the recent notes an empty query returns


class MemoryStore:
    """Notes in the SQLite database at ``path`` (created, with its directory, on first use)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._ready = False

    async def store(self, namespace: str, content: str) -> Memory:
        """Keep ``content`` under ``namespace``."""
        return await asyncio.to_thread(self._store, namespace, content)

    async def search(self, namespace: str, query: str, limit: int = 5) -> list[MemoryHit]:
        """The ``limit`` best notes for ``query``; an empty query gives the newest notes."""
        return await asyncio.to_thread(self._search, namespace, query, limit)

    async def recent(self, namespace: str, limit: int = 5) -> list[Memory]:
        """The ``limit`` newest notes of ``namespace``, newest first."""
        return await asyncio.to_thread(self._recent, namespace, limit)

    # --- in the worker thread ----------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if not self._ready:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=30)
        if not self._ready:
            connection.executescript(_SCHEMA)
            self._ready = True
        return connection

    def _store(self, namespace: str, content: str) -> Memory:
        now = time.time()
        with closing(self._connect()) as connection, connection:
            cursor = connection.execute(
                "INSERT INTO memories (namespace, content, terms, created_at) VALUES (?, ?, ?, ?)",
                (namespace, content, " ".join(sorted(set(terms(content)))), now),
            )
            row_id = cursor.lastrowid
        assert row_id is not None  # an INSERT always sets it
        return Memory(row_id, namespace, content, now)

    def _rows(self, namespace: str, limit: int | None = None) -> list[tuple[Memory, str]]:
        sql = "SELECT id, content, terms, created_at FROM memories WHERE namespace = ?"
        sql += " ORDER BY id DESC" + (" LIMIT ?" if limit is not None else "")
        parameters: tuple[str | int, ...] = (namespace,) if limit is None else (namespace, limit)
        with closing(self._connect()) as connection:
            rows = connection.execute(sql, parameters).fetchall()
        return [(Memory(row[0], namespace, row[1], row[3]), row[2]) for row in rows]

    def _recent(self, namespace: str, limit: int) -> list[Memory]:
        return [memory for memory, _ in self._rows(namespace, limit)]

    def _search(self, namespace: str, query: str, limit: int) -> list[MemoryHit]:
        wanted = set(terms(query))
        if not wanted:
            return [MemoryHit(memory, 0.0) for memory in self._recent(namespace, limit)]
        rows = [(memory, set(kept.split())) for memory, kept in self._rows(namespace)]
        weights = _weights(wanted, [kept for _, kept in rows])
        scored = [
            MemoryHit(memory, sum(weights[t] for t in wanted & kept)) for memory, kept in rows
        ]
        matching = [hit for hit in scored if hit.score > 0]
        matching.sort(key=lambda hit: (-hit.score, -hit.memory.id))
        return matching[:limit]


def _weights(wanted: set[str], documents: Sequence[set[str]]) -> dict[str, float]:
    """An idf weight per query term: rare terms count for more than common ones."""
    frequency = Counter(term for kept in documents for term in wanted & kept)
    total = len(documents)
    return {term: math.log(1 + (total + 1) / (frequency[term] + 0.5)) for term in wanted}
