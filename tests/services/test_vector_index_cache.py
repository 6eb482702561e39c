"""The in-memory index cache of vector stores: loaded once, added to by ``seq``, rebuilt on a
new epoch, least recently searched stores dropped past the bound (real SQLite and PostgreSQL)."""

from __future__ import annotations

import time
from functools import partial

import numpy as np
from sqlalchemy.engine import Connection

from agentloom.services.vector_index_cache import IndexCache
from agentloom.storage import schema
from agentloom.storage.database import Database
from agentloom.storage.vector_stores_base import IndexState, StoreRow

VS = schema.vector_stores
VC = schema.vector_store_chunks
DIMENSIONS = 4


async def _store(database: Database, store_id: str) -> None:
    now = time.time()
    row = StoreRow(store_id, now, store_id, "{}", None, None, now, "test", DIMENSIONS)
    await database.vector_stores.create(row, [])


async def _add(database: Database, store_id: str, *texts: str, file_id: str = "file-1") -> None:
    vector = np.ones(DIMENSIONS, dtype="<f4").tobytes()
    rows = [
        {"vector_store_id": store_id, "file_id": file_id, "position": at, "text": text,
         "vector": vector}
        for at, text in enumerate(texts)
    ]  # fmt: skip

    def insert(conn: Connection) -> None:
        conn.execute(VC.insert(), rows)

    await database.runner.write(insert)


async def _state(database: Database, store_id: str) -> IndexState:
    state = await database.vector_chunks.index_state(store_id)
    assert state is not None
    return state


async def test_new_chunks_are_added_to_the_loaded_index(database: Database) -> None:
    await _store(database, "vs_a")
    await _add(database, "vs_a", "alpha", "bravo")
    cache = IndexCache(database.vector_chunks, max_chunks=100)

    first = await cache.index(await _state(database, "vs_a"))
    assert len(first) == 2
    await _add(database, "vs_a", "charlie")
    second = await cache.index(await _state(database, "vs_a"))

    assert second is first
    assert len(second) == 3
    hits = second.search(None, "charlie", limit=5, mode="keyword")
    assert len(hits) == 1


async def test_a_new_epoch_drops_the_files_that_lost_their_chunks(database: Database) -> None:
    await _store(database, "vs_a")
    await _add(database, "vs_a", "alpha", "bravo")
    await _add(database, "vs_a", "charlie", file_id="file-2")
    cache = IndexCache(database.vector_chunks, max_chunks=100)
    index = await cache.index(await _state(database, "vs_a"))

    def remove(file_id: str, conn: Connection) -> None:
        conn.execute(VC.delete().where(VC.c.file_id == file_id))
        conn.execute(VS.update().where(VS.c.id == "vs_a").values(epoch=VS.c.epoch + 1))

    await database.runner.write(partial(remove, "file-2"))
    pruned = await cache.index(await _state(database, "vs_a"))
    assert pruned is index
    assert len(pruned) == 2
    assert pruned.search(None, "charlie", limit=5, mode="keyword") == []
    # removed and attached again (new chunks), before this process searched the store
    await database.runner.write(partial(remove, "file-1"))
    await _add(database, "vs_a", "delta", file_id="file-1")
    again = await cache.index(await _state(database, "vs_a"))

    assert len(again) == 1
    assert again.search(None, "alpha", limit=5, mode="keyword") == []
    assert [h.file_id for h in again.search(None, "delta", limit=5, mode="keyword")] == ["file-1"]


async def test_the_least_recently_searched_store_is_dropped_past_the_bound(
    database: Database,
) -> None:
    for store_id in ("vs_a", "vs_b"):
        await _store(database, store_id)
        await _add(database, store_id, "alpha", "bravo")
    cache = IndexCache(database.vector_chunks, max_chunks=3)

    a = await cache.index(await _state(database, "vs_a"))
    await cache.index(await _state(database, "vs_b"))
    assert cache.chunks == 2  # vs_a was dropped
    again = await cache.index(await _state(database, "vs_a"))

    assert again is not a  # loaded anew
    assert cache.chunks == 2
