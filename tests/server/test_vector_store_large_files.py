"""Ingestion of a file of many chunks: embedded a batch at a time into a spool, written in
several insert batches in the one transaction that completes the file, so that its chunks
appear all at once, never while it is in progress, never after it was cancelled, and once after
a takeover. On SQLite and PostgreSQL, with the fake backend's hashed embeddings (fast)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import openai
import pytest
import sqlalchemy as sa
from starlette.applications import Starlette

from agentloom.config import Settings, VectorStoreSettings
from agentloom.retrieval.chunking import chunk_text
from agentloom.retrieval.embeddings import build_embedder
from agentloom.services.vector_stores.chunk_spool import WRITE_BATCH
from agentloom.storage import schema
from agentloom.testing.backend import FakeBackend
from agentloom.testing.embeddings import hashed_embedding
from tests.plugins.server import make_settings
from tests.server.vector_support import WAIT, GatedEmbedder, chunks, runtime, serving, upload

STATIC: Any = {
    "type": "static",
    "static": {"max_chunk_size_tokens": 100, "chunk_overlap_tokens": 0},
}
LONG = " ".join(f"Sentence {n} tells of kettle number {n}." for n in range(6000))
EXPECTED = [c.text for c in chunk_text(LONG, max_tokens=100, overlap=0)]
CAKE = "Lemon cake needs four eggs, two lemons and a cup of sugar."
VC = schema.vector_store_chunks

pytestmark = pytest.mark.both_databases  # what these check depends on the storage


def _settings(backend: FakeBackend, database_url: str, files: Path) -> Settings:
    settings = make_settings(backend, database_url, files_directory=files)
    tuned = VectorStoreSettings(ingestion_concurrency=1, poll_after_ms=20)
    return settings.model_copy(update={"vector_stores": tuned})


async def _stored(app: Starlette, file_id: str) -> list[tuple[int, str, bytes]]:
    """The file's chunks in ``seq`` order: position, text, vector."""

    def read(conn: sa.Connection) -> list[tuple[int, str, bytes]]:
        query = sa.select(VC.c.position, VC.c.text, VC.c.vector).where(VC.c.file_id == file_id)
        return [
            (r.position, r.text, bytes(r.vector)) for r in conn.execute(query.order_by(VC.c.seq))
        ]

    return await runtime(app).database.runner.read(read)


async def _attach(client: openai.AsyncOpenAI, store_id: str, file_id: str) -> None:
    await client.vector_stores.files.create(
        file_id=file_id, vector_store_id=store_id, chunking_strategy=STATIC
    )


def test_the_file_makes_several_write_batches() -> None:
    assert len(EXPECTED) > WRITE_BATCH


async def test_a_large_file_is_stored_whole_and_in_order(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    async with serving(_settings(backend, database_url, tmp_path)) as (app, client):
        store = await client.vector_stores.create(name="docs")
        file_id = await upload(client, "long.txt", LONG)
        done = await client.vector_stores.files.create_and_poll(
            file_id=file_id, vector_store_id=store.id, chunking_strategy=STATIC
        )
        stored = await _stored(app, file_id)
        found = await client.vector_stores.search(
            store.id, query="kettle number 5999", extra_body={"search_mode": "keyword"}
        )

    assert done.status == "completed", done.last_error
    assert [(position, text) for position, text, _ in stored] == list(enumerate(EXPECTED))
    last = np.frombuffer(stored[-1][2], dtype="<f4")
    np.testing.assert_allclose(last, hashed_embedding(EXPECTED[-1]), atol=1e-6)
    vector_bytes = sum(len(vector) for _, _, vector in stored)
    assert done.usage_bytes == sum(len(t.encode()) for t in EXPECTED) + vector_bytes
    assert "kettle number 5999" in found.data[0].content[0].text


async def test_a_large_file_cancelled_midway_gets_no_chunks(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    settings = _settings(backend, database_url, tmp_path)
    gated = await GatedEmbedder.around(build_embedder(settings.embeddings))
    gated.passes = 4  # four embedding batches go to the spool, then the fifth waits
    try:
        async with serving(settings, embedder=gated) as (app, client):
            store = await client.vector_stores.create(name="docs")
            file_id = await upload(client, "long.txt", LONG)
            batch = await client.vector_stores.file_batches.create(
                store.id, file_ids=[file_id], chunking_strategy=STATIC
            )
            await asyncio.wait_for(gated.entered.wait(), WAIT)
            midway = await chunks(app, file_id=file_id)
            await client.vector_stores.file_batches.cancel(batch.id, vector_store_id=store.id)
            gated.gate.set()
            # one file at a time: once a later file is done, the cancelled one has stopped
            probe = await upload(client, "probe.txt", CAKE)
            await client.vector_stores.files.create_and_poll(
                file_id=probe, vector_store_id=store.id
            )
            state = await client.vector_stores.files.retrieve(file_id, vector_store_id=store.id)
            after = await chunks(app, file_id=file_id)
    finally:
        await gated.aclose()

    assert (midway, after) == (0, 0)
    assert state.status == "cancelled"


async def test_a_large_file_taken_over_midway_is_stored_once(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    first = _settings(backend, database_url, tmp_path)
    quick = first.jobs.model_copy(update={"drain_seconds": 0.1})  # stop without waiting for it
    first = first.model_copy(update={"jobs": quick})
    gated = await GatedEmbedder.around(build_embedder(first.embeddings))
    gated.passes = 4
    try:
        async with serving(first, embedder=gated) as (app, client):
            store = await client.vector_stores.create(name="docs")
            file_id = await upload(client, "long.txt", LONG)
            await _attach(client, store.id, file_id)
            await asyncio.wait_for(gated.entered.wait(), WAIT)
            midway = await chunks(app, file_id=file_id)
        # the first server stopped in the middle of the file: its spool went with it
    finally:
        await gated.aclose()

    async with serving(_settings(backend, database_url, tmp_path)) as (app, client):
        done = await asyncio.wait_for(
            client.vector_stores.files.poll(file_id, vector_store_id=store.id), WAIT
        )
        stored = await _stored(app, file_id)

    assert midway == 0
    assert done.status == "completed", done.last_error
    assert [(position, text) for position, text, _ in stored] == list(enumerate(EXPECTED))


async def test_a_file_being_ingested_says_how_far_it_has_got(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    """An agentloom extension: ``progress`` (chunks embedded of the chunks the text was cut
    into) on the file and, summed over its files in progress, on the store; all of it once
    the file is completed."""
    settings = _settings(backend, database_url, tmp_path)
    batch = settings.vector_stores.embed_batch_size
    gated = await GatedEmbedder.around(build_embedder(settings.embeddings))
    gated.passes = 4  # four embedding batches go through, the fifth waits
    try:
        async with serving(settings, embedder=gated) as (_, client):
            store = await client.vector_stores.create(name="docs")
            file_id = await upload(client, "long.txt", LONG)
            await _attach(client, store.id, file_id)
            await asyncio.wait_for(gated.entered.wait(), WAIT)
            midway = await client.vector_stores.files.retrieve(file_id, vector_store_id=store.id)
            busy = await client.vector_stores.retrieve(store.id)
            gated.gate.set()
            done = await client.vector_stores.files.poll(file_id, vector_store_id=store.id)
            idle = await client.vector_stores.retrieve(store.id)
    finally:
        await gated.aclose()

    progress = {"chunks_total": len(EXPECTED), "chunks_embedded": 4 * batch}
    assert midway.status == "in_progress"
    assert midway.model_extra == {"progress": progress}
    assert busy.model_extra == {"progress": progress}
    everything = {"chunks_total": len(EXPECTED), "chunks_embedded": len(EXPECTED)}
    assert done.status == "completed"
    assert done.model_extra == {"progress": everything}
    assert idle.model_extra == {}  # nothing in progress: nothing to say
