"""The in-memory index cache of vector stores: loaded once, added to by ``seq``, rebuilt on a
new epoch, least recently searched stores dropped past the bound, a store past the ANN threshold
searched while its graph is built (real SQLite and PostgreSQL)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import partial

import anyio
import numpy as np
from numpy.typing import NDArray
from sqlalchemy.engine import Connection

from agentloom.retrieval.ann import ApproximateIndex
from agentloom.retrieval.vector_index import IndexOptions
from agentloom.services.vector_stores.index_cache import IndexCache
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
    vectors = np.ones((len(texts), DIMENSIONS), dtype="<f4")
    await _add_vectors(database, store_id, texts, vectors, file_id)


async def _add_vectors(
    database: Database,
    store_id: str,
    texts: Sequence[str],
    vectors: NDArray[np.float32],
    file_id: str,
) -> None:
    rows = [
        {"vector_store_id": store_id, "file_id": file_id, "position": at, "text": text,
         "vector": vector.astype("<f4").tobytes()}
        for at, (text, vector) in enumerate(zip(texts, vectors, strict=True))
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


async def test_a_store_past_the_ann_threshold_is_searched_while_its_graph_is_built(
    database: Database,
) -> None:
    await _store(database, "vs_a")
    vectors = np.random.default_rng(0).standard_normal((600, DIMENSIONS)).astype(np.float32)
    for f in range(3):
        texts = [f"chunk {i}" for i in range(200)]
        await _add_vectors(database, "vs_a", texts, vectors[f * 200 : (f + 1) * 200], f"file-{f}")
    options = IndexOptions(ann_threshold=300)
    cache = IndexCache(database.vector_chunks, max_chunks=10_000, options=options)

    def nearest_files(index: ApproximateIndex, probes: NDArray[np.float32]) -> list[str]:
        return [index.search(v, "", limit=1, mode="vector")[0].file_id for v in probes]

    index = await cache.index(await _state(database, "vs_a"))  # the graph is built meanwhile
    assert isinstance(index, ApproximateIndex)
    assert len(index) == 600
    expected = [f"file-{i // 200}" for i in range(0, 600, 10)]
    assert nearest_files(index, vectors[::10]) == expected  # served at once
    assert await anyio.to_thread.run_sync(index.wait_ready, 60.0)
    assert index.approximate
    found = nearest_files(index, vectors[::10])
    # approximate: a graph built on several threads leaves a few rows unreachable (about 0.3%
    # of self-queries miss, measured with usearch alone), so not every probe must find its row
    assert sum(a == b for a, b in zip(found, expected, strict=True)) >= 0.95 * len(expected)

    def remove(conn: Connection) -> None:
        conn.execute(VC.delete().where(VC.c.file_id == "file-1"))
        conn.execute(VS.update().where(VS.c.id == "vs_a").values(epoch=VS.c.epoch + 1))

    await database.runner.write(remove)
    pruned = await cache.index(await _state(database, "vs_a"))
    assert pruned is index
    assert len(index) == 400
    assert "file-1" not in nearest_files(index, vectors[200:400:5])
    assert await anyio.to_thread.run_sync(index.wait_ready, 60.0)
    assert index.approximate
