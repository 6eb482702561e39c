"""Agent memory notes on the storage layer, on SQLite and PostgreSQL alike, and a SQLite file
written before the notes moved here (no migration record) that opens as it is."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentloom.agents.memory import MemoryStore
from agentloom.retrieval.keywords import terms
from agentloom.storage.database import Database

# The schema the SDK created in ``memory.db`` before the notes moved to the storage layer.
OLD_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    namespace TEXT NOT NULL,
    content TEXT NOT NULL,
    terms TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_namespace ON memories (namespace, id);
"""
NOTE = "Alice prefers window seats."


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[MemoryStore]:
    store = MemoryStore.at(database_url)
    yield store
    await store.aclose()


async def test_notes_are_stored_and_searched(store: MemoryStore, database_url: str) -> None:
    for note in ["project deadline is Friday", "project budget is 10k", "budget review Friday"]:
        await store.store("s", note)
    kept = await store.store("other", "project budget elsewhere")

    hits = await store.search("s", "project budget", limit=2)
    recent = await store.recent("s", limit=2)
    newest = await store.search("s", "", limit=1)

    assert [h.memory.content for h in hits] == ["project budget is 10k", "budget review Friday"]
    assert hits[0].score > hits[1].score > 0
    assert [m.content for m in recent] == ["budget review Friday", "project budget is 10k"]
    assert [(h.memory.content, h.score) for h in newest] == [("budget review Friday", 0.0)]
    assert (kept.namespace, kept.content) == ("other", "project budget elsewhere")
    again = MemoryStore.at(database_url)  # as another process would open it
    try:
        assert [m.id for m in await again.recent("other")] == [kept.id]
        assert await again.search("nobody", "project") == []
    finally:
        await again.aclose()


async def test_a_store_on_an_open_database(database: Database) -> None:
    store = MemoryStore.on(database)
    memory = await store.store("s", "Alice prefers window seats.")
    await store.aclose()  # the database stays open

    assert await MemoryStore.on(database).recent("s") == [memory]


async def test_a_file_from_before_the_move_opens_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "data" / "memory.db"
    path.parent.mkdir()
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA)
        db.execute(
            "INSERT INTO memories (namespace, content, terms, created_at) VALUES (?, ?, ?, 1.0)",
            ("alice", NOTE, " ".join(sorted(set(terms(NOTE))))),
        )
    db.close()
    store = MemoryStore(path)
    try:
        hits = await store.search("alice", "which seats?")
        added = await store.store("alice", "Alice's cat is Miso.")
    finally:
        await store.aclose()

    assert [(h.memory.id, h.memory.content, h.memory.created_at) for h in hits] == [(1, NOTE, 1.0)]
    assert added.id == 2
