"""Background ingestion: real statuses, failures that spare the other files, cancellation and
removal mid-flight leaving no chunks, cascades, expiry, several servers on one database, and the
claim of a stopped server taken over."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import openai
import pytest
import sqlalchemy as sa
from starlette.applications import Starlette

from agentloom.config import EmbeddingSettings, Settings, VectorStoreSettings
from agentloom.errors import UpstreamError, UpstreamRateLimitError
from agentloom.retrieval.embeddings import build_embedder
from agentloom.storage import schema
from agentloom.storage.database import Database
from agentloom.storage.scoped import Project
from agentloom.storage.vector_stores import queue_ingestion
from agentloom.storage.vector_stores_base import StoreFileRow, StoreRow
from agentloom.tenancy import DEFAULT_PROJECT
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import make_settings
from tests.server.vector_support import (
    WAIT,
    GatedEmbedder,
    chunks,
    count,
    execute,
    runtime,
    serving,
    upload,
    wait_until,
)

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

KETTLE = "The Zephyr kettle boils a litre of water in ninety seconds."
CAKE = "Lemon cake needs four eggs, two lemons and a cup of sugar."
VSF = schema.vector_store_files


def _settings(
    backend: FakeBackend, database_url: str, files: Path, *, concurrency: int = 2
) -> Settings:
    """Settings of one server (each call: a new instance id) on a shared database and files."""
    settings = make_settings(backend, database_url, files_directory=files)
    tuned = VectorStoreSettings(ingestion_concurrency=concurrency, poll_after_ms=20)
    return settings.model_copy(update={"vector_stores": tuned})


async def _claimed_by(app: Starlette, store_id: str, file_id: str) -> str | None:
    def read(conn: sa.Connection) -> str | None:
        query = sa.select(VSF.c.claimed_by).where(
            VSF.c.vector_store_id == store_id, VSF.c.file_id == file_id
        )
        return conn.scalar(query)

    return await runtime(app).database.runner.read(read)


async def test_a_batch_with_unreadable_files_completes_the_others(
    app: Starlette, client: openai.AsyncOpenAI
) -> None:
    store = await client.vector_stores.create(name="docs")
    good = [await upload(client, "kettle.txt", KETTLE), await upload(client, "cake.md", CAKE)]
    broken = {
        await upload(client, "broken.pdf", b"%PDF-1.4\nthis is no pdf"): "invalid_file",
        await upload(client, "blob.bin", bytes(range(256)) * 8): "unsupported_file",
        await upload(client, "blank.txt", b"  \n\n  \t"): "invalid_file",
    }

    batch = await client.vector_stores.file_batches.create_and_poll(
        store.id, file_ids=[good[0], *broken, good[1]]
    )

    counts = batch.file_counts
    assert batch.status == "completed"
    assert (counts.completed, counts.failed, counts.in_progress, counts.total) == (2, 3, 0, 5)
    failed = await client.vector_stores.files.list(vector_store_id=store.id, filter="failed")
    errors = {f.id: f.last_error for f in failed.data}
    assert {file_id: e.code for file_id, e in errors.items() if e} == broken
    assert all(e and e.message for e in errors.values())
    for file_id in broken:
        assert await chunks(app, file_id=file_id) == 0
    assert (await client.vector_stores.retrieve(store.id)).file_counts.failed == 3


async def test_cancelling_a_batch_mid_ingestion_leaves_no_chunks(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    settings = _settings(backend, database_url, tmp_path, concurrency=1)
    gated = await GatedEmbedder.around(build_embedder(settings.embeddings))
    try:
        async with serving(settings, embedder=gated) as (app, client):
            store = await client.vector_stores.create(name="docs")
            ids = [await upload(client, f"f{n}.txt", f"{KETTLE} ({n})") for n in range(3)]
            batch = await client.vector_stores.file_batches.create(store.id, file_ids=ids)
            await asyncio.wait_for(gated.entered.wait(), WAIT)  # one file is being embedded

            cancelled = await client.vector_stores.file_batches.cancel(
                batch.id, vector_store_id=store.id
            )
            gated.gate.set()
            # one file at a time: once a later file is done, the cancelled one has finished
            probe = await upload(client, "probe.txt", CAKE)
            done = await client.vector_stores.files.create_and_poll(
                file_id=probe, vector_store_id=store.id
            )

            assert cancelled.status == "cancelled"
            counts = cancelled.file_counts
            assert (counts.cancelled, counts.in_progress, counts.total) == (3, 0, 3)
            assert done.status == "completed"
            assert await chunks(app, vector_store_id=store.id) == await chunks(app, file_id=probe)
            assert await chunks(app, file_id=probe) > 0
            listed = await client.vector_stores.files.list(
                vector_store_id=store.id, filter="cancelled"
            )
            assert sorted(f.id for f in listed.data) == sorted(ids)
            retrieved = await client.vector_stores.file_batches.retrieve(
                batch.id, vector_store_id=store.id
            )
            assert retrieved == cancelled
            # a cancelled file attached again is ingested again
            again = await client.vector_stores.files.create_and_poll(
                file_id=ids[0], vector_store_id=store.id, attributes={"retry": True}
            )
            assert (again.status, again.attributes) == ("completed", {"retry": True})
            assert await chunks(app, file_id=ids[0]) > 0
    finally:
        await gated.aclose()


async def test_a_file_attached_again_while_its_cancelled_ingestion_runs_is_ingested(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    settings = _settings(backend, database_url, tmp_path, concurrency=1)
    gated = await GatedEmbedder.around(build_embedder(settings.embeddings))
    try:
        async with serving(settings, embedder=gated) as (app, client):
            store = await client.vector_stores.create(name="docs")
            file_id = await upload(client, "kettle.txt", KETTLE)
            batch = await client.vector_stores.file_batches.create(store.id, file_ids=[file_id])
            await asyncio.wait_for(gated.entered.wait(), WAIT)  # its job is embedding it
            await client.vector_stores.file_batches.cancel(batch.id, vector_store_id=store.id)

            await client.vector_stores.files.create(file_id=file_id, vector_store_id=store.id)
            gated.gate.set()  # the old job goes on, finds its claim gone, and stops
            done = await client.vector_stores.files.poll(file_id, vector_store_id=store.id)

            assert done.status == "completed", done.last_error
            assert await chunks(app, file_id=file_id) > 0
    finally:
        await gated.aclose()


async def test_a_file_removed_or_deleted_mid_ingestion_leaves_no_chunks(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    settings = _settings(backend, database_url, tmp_path, concurrency=1)
    gated = await GatedEmbedder.around(build_embedder(settings.embeddings))
    try:
        async with serving(settings, embedder=gated) as (app, client):
            store = await client.vector_stores.create(name="docs")
            removed = await upload(client, "removed.txt", KETTLE)
            deleted = await upload(client, "deleted.txt", KETTLE)

            drops: list[tuple[str, Callable[[], Awaitable[object]]]] = [
                (
                    removed,
                    lambda: client.vector_stores.files.delete(removed, vector_store_id=store.id),
                ),
                (deleted, lambda: client.files.delete(deleted)),
            ]
            for file_id, drop in drops:
                gated.gate.clear()
                gated.entered.clear()
                await client.vector_stores.files.create(file_id=file_id, vector_store_id=store.id)
                await asyncio.wait_for(gated.entered.wait(), WAIT)
                await drop()
                gated.gate.set()
                probe = await upload(client, "probe.txt", CAKE)
                done = await client.vector_stores.files.create_and_poll(
                    file_id=probe, vector_store_id=store.id
                )
                assert done.status == "completed"
                assert await chunks(app, file_id=file_id) == 0
                assert await count(app, VSF, file_id=file_id) == 0

            state = await client.vector_stores.retrieve(store.id)
            assert (state.file_counts.total, state.file_counts.completed) == (2, 2)
    finally:
        await gated.aclose()


async def test_deleting_a_file_removes_it_from_every_store(
    app: Starlette, client: openai.AsyncOpenAI
) -> None:
    first = await client.vector_stores.create(name="one")
    second = await client.vector_stores.create(name="two")
    doomed = await upload(client, "kettle.txt", KETTLE)
    kept = await upload(client, "cake.md", CAKE)
    for store, file_id in ((first, doomed), (second, doomed), (first, kept)):
        await client.vector_stores.files.create_and_poll(file_id=file_id, vector_store_id=store.id)
    await client.vector_stores.search(second.id, query="kettle")  # its index is loaded
    assert await chunks(app, file_id=doomed) > 0

    await client.files.delete(doomed)

    assert await chunks(app, file_id=doomed) == 0
    assert await count(app, VSF, file_id=doomed) == 0
    assert await chunks(app, file_id=kept) > 0
    assert (await client.vector_stores.retrieve(first.id)).file_counts.total == 1
    assert (await client.vector_stores.retrieve(second.id)).file_counts.total == 0
    assert (await client.vector_stores.search(second.id, query="kettle")).data == []


async def test_deleting_a_store_deletes_its_files_batches_and_chunks(
    app: Starlette, client: openai.AsyncOpenAI
) -> None:
    doomed = await client.vector_stores.create(name="doomed")
    other = await client.vector_stores.create(name="other")
    ids = [await upload(client, "kettle.txt", KETTLE), await upload(client, "cake.md", CAKE)]
    await client.vector_stores.file_batches.create_and_poll(doomed.id, file_ids=ids)
    await client.vector_stores.files.create_and_poll(file_id=ids[0], vector_store_id=other.id)
    assert await chunks(app, vector_store_id=doomed.id) > 0

    await client.vector_stores.delete(doomed.id)

    for table in (VSF, schema.vector_store_file_batches, schema.vector_store_chunks):
        assert await count(app, table, vector_store_id=doomed.id) == 0
    assert await chunks(app, vector_store_id=other.id) > 0
    assert [(await client.files.retrieve(f)).id for f in ids] == ids


async def test_an_expired_store_takes_no_search_and_no_file(
    app: Starlette, client: openai.AsyncOpenAI
) -> None:
    store = await client.vector_stores.create(
        name="docs", expires_after={"anchor": "last_active_at", "days": 1}
    )
    file_id = await upload(client, "kettle.txt", KETTLE)
    table = schema.vector_stores
    past = time.time() - 10
    await execute(app, table.update().where(table.c.id == store.id).values(expires_at=past))

    expired = await client.vector_stores.retrieve(store.id)
    with pytest.raises(openai.BadRequestError) as search:
        await client.vector_stores.search(store.id, query="kettle")
    with pytest.raises(openai.BadRequestError) as attach:
        await client.vector_stores.files.create(file_id=file_id, vector_store_id=store.id)
    revived = await client.vector_stores.update(store.id, expires_after=None)

    assert expired.status == "expired"
    assert search.value.body["code"] == "vector_store_expired"  # type: ignore[index]
    assert attach.value.body["code"] == "vector_store_expired"  # type: ignore[index]
    assert revived.status == "completed"
    assert (await client.vector_stores.delete(store.id)).deleted


async def test_searching_marks_the_store_active_and_moves_its_expiry(
    app: Starlette, client: openai.AsyncOpenAI
) -> None:
    store = await client.vector_stores.create(
        name="docs", expires_after={"anchor": "last_active_at", "days": 3}
    )
    table = schema.vector_stores
    an_hour_ago = time.time() - 3600
    await execute(
        app,
        table.update()
        .where(table.c.id == store.id)
        .values(last_active_at=an_hour_ago, expires_at=an_hour_ago + 3 * 86_400),
    )

    await client.vector_stores.search(store.id, query="anything")

    used = await client.vector_stores.retrieve(store.id)
    assert used.last_active_at is not None
    assert used.last_active_at > an_hour_ago + 3000
    assert used.expires_at == used.last_active_at + 3 * 86_400


async def test_two_servers_share_one_database(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    one = _settings(backend, database_url, tmp_path)
    two = _settings(backend, database_url, tmp_path)
    async with serving(one) as (_, writer), serving(two) as (_, reader):
        store = await writer.vector_stores.create(name="docs")
        kettle = await upload(writer, "kettle.txt", KETTLE)
        await writer.vector_stores.files.create_and_poll(file_id=kettle, vector_store_id=store.id)

        first = await reader.vector_stores.search(store.id, query="kettle water")
        cake = await upload(writer, "cake.md", CAKE)
        await writer.vector_stores.files.create_and_poll(file_id=cake, vector_store_id=store.id)
        added = await reader.vector_stores.search(
            store.id, query="lemons", extra_body={"search_mode": "keyword"}
        )
        await writer.vector_stores.files.delete(kettle, vector_store_id=store.id)
        removed = await reader.vector_stores.search(
            store.id, query="kettle", extra_body={"search_mode": "keyword"}
        )

        assert first.data[0].file_id == kettle
        assert [r.file_id for r in added.data] == [cake]  # new chunks, loaded by seq
        assert removed.data == []  # deleted chunks: the index was rebuilt


async def test_the_claim_of_a_stopped_server_is_taken_over(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    first = _settings(backend, database_url, tmp_path)
    quick = first.jobs.model_copy(update={"drain_seconds": 0.1})  # stop without waiting for it
    first = first.model_copy(update={"jobs": quick})
    gated = await GatedEmbedder.around(build_embedder(first.embeddings))
    try:
        async with serving(first, embedder=gated) as (app, client):
            store = await client.vector_stores.create(name="docs")
            file_id = await upload(client, "kettle.txt", KETTLE)
            await client.vector_stores.files.create(file_id=file_id, vector_store_id=store.id)
            await asyncio.wait_for(gated.entered.wait(), WAIT)
            claimer = await _claimed_by(app, store.id, file_id)
        # the first server stopped in the middle of the ingestion: its claim is left behind
    finally:
        await gated.aclose()

    async with serving(_settings(backend, database_url, tmp_path)) as (app, client):
        done = await client.vector_stores.files.poll(file_id, vector_store_id=store.id)
        assert claimer == first.server.instance_id
        assert done.status == "completed", done.last_error
        assert await chunks(app, file_id=file_id) > 0
        assert (await client.vector_stores.search(store.id, query="kettle")).data


async def test_a_file_that_keeps_interrupting_ingestion_fails(
    app: Starlette, client: openai.AsyncOpenAI
) -> None:
    store = await client.vector_stores.create(name="docs")
    file_id = await upload(client, "kettle.txt", KETTLE)
    await client.vector_stores.files.create_and_poll(file_id=file_id, vector_store_id=store.id)
    mine = sa.and_(VSF.c.vector_store_id == store.id, VSF.c.file_id == file_id)
    chunk_table = schema.vector_store_chunks
    await execute(app, chunk_table.delete().where(chunk_table.c.file_id == file_id))
    await execute(
        app,
        VSF.update().where(mine).values(status="in_progress", claimed_by=None, attempts=3),
    )  # claimed three times already: each time its process died

    await _queue(app, store.id, file_id)
    runtime(app).jobs.nudge()
    done = await asyncio.wait_for(
        client.vector_stores.files.poll(file_id, vector_store_id=store.id), WAIT
    )

    assert done.status == "failed"
    assert done.last_error is not None
    assert done.last_error.code == "server_error"


def _quick_retries(settings: Settings, max_retries: int) -> Settings:
    """``settings`` with embedding retries that wait milliseconds, not seconds."""
    changes = {"max_retries": max_retries, "retry_base_delay": 0.005, "retry_max_delay": 0.05}
    embeddings = settings.embeddings.model_copy(update=changes)
    return settings.model_copy(update={"embeddings": embeddings})


async def test_passing_embedding_failures_are_retried(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    settings = _quick_retries(_settings(backend, database_url, tmp_path), max_retries=4)
    async with serving(settings) as (app, client):
        store = await client.vector_stores.create(name="docs")
        file_id = await upload(client, "kettle.txt", KETTLE)
        before = len(backend.embedding_requests)
        backend.embedding_errors.extend(
            [
                UpstreamRateLimitError("slow down", retry_after=0.01),
                UpstreamError("bad gateway", status=502),
            ]
        )

        done = await client.vector_stores.files.create_and_poll(
            file_id=file_id, vector_store_id=store.id
        )

        assert done.status == "completed", done.last_error
        assert backend.embedding_errors == []
        assert len(backend.embedding_requests) == before + 3  # one chunk: 429, 502, answered
        assert await chunks(app, file_id=file_id) > 0
        found = await client.vector_stores.search(store.id, query="kettle water")
        assert [hit.file_id for hit in found.data] == [file_id]


async def test_embedding_failures_past_the_retries_fail_the_file(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    settings = _quick_retries(_settings(backend, database_url, tmp_path), max_retries=1)
    async with serving(settings) as (app, client):
        store = await client.vector_stores.create(name="docs")
        file_id = await upload(client, "kettle.txt", KETTLE)
        backend.embedding_errors.extend(UpstreamError("bad gateway", status=502) for _ in range(2))

        done = await client.vector_stores.files.create_and_poll(
            file_id=file_id, vector_store_id=store.id
        )

        assert done.status == "failed"
        assert done.last_error is not None
        assert done.last_error.code == "server_error"
        assert "bad gateway" in done.last_error.message
        assert backend.embedding_errors == []
        assert await chunks(app, file_id=file_id) == 0


async def test_a_files_job_claims_it_from_whoever_held_it(database: Database) -> None:
    now = time.time()
    store = StoreRow("vs_1", now, "s", "{}", None, None, now, "e", 3)
    row = StoreFileRow("vs_1", "file-1", now, "in_progress", "{}", "{}")
    await database.vector_stores.create(store, [row])
    chunks_store = database.vector_chunks
    me = database.instance_id

    def jobs(conn: sa.Connection) -> list[tuple[str, str]]:
        query = sa.select(schema.jobs.c.kind, schema.jobs.c.subject)
        return [(r.kind, r.subject) for r in conn.execute(query)]

    queued = await database.runner.read(jobs)
    gone = await chunks_store.claim("vs_1", "file-1", "inst_gone")
    taken = await chunks_store.claim("vs_1", "file-1", me)  # the job was taken over
    assert gone is not None
    assert taken is not None
    late = await chunks_store.complete(gone, "inst_gone", lambda: iter([]), 0, 0)
    await database.runner.write(lambda conn: conn.execute(VSF.update().values(status="cancelled")))
    cancelled = await chunks_store.claim("vs_1", "file-1", me)

    assert queued == [("ingest", "vs_1/file-1")]  # queued with the file
    assert (gone.attempts, taken.attempts) == (1, 2)
    assert late is False  # no longer its claim: nothing written
    assert cancelled is None


async def test_the_default_minilm_embedder_ingests_and_searches(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    settings = _settings(backend, database_url, tmp_path)
    settings = settings.model_copy(update={"embeddings": EmbeddingSettings()})
    async with serving(settings) as (_, client):
        store = await client.vector_stores.create(name="docs")
        for name, text in (("kettle.txt", KETTLE), ("cake.md", CAKE)):
            file_id = await upload(client, name, text)
            done = await client.vector_stores.files.create_and_poll(
                file_id=file_id, vector_store_id=store.id
            )
            assert done.status == "completed", done.last_error

        found = await client.vector_stores.search(
            store.id,
            query="How long does it take to heat up water?",
            extra_body={"search_mode": "vector"},
        )

        assert found.data[0].filename == "kettle.txt"
        assert found.data[0].score > found.data[1].score


async def test_work_added_by_another_server_is_found_by_polling(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    settings = _settings(backend, database_url, tmp_path)
    async with serving(settings) as (app, client):
        store = await client.vector_stores.create(name="docs")
        file_id = await upload(client, "kettle.txt", KETTLE)
        row = StoreFileRow(store.id, file_id, time.time(), "in_progress", "{}", _AUTO)
        # written straight to the database, as another process would: nobody wakes the worker
        await execute(app, VSF.insert().values(**_values(row)))
        await _queue(app, store.id, file_id)

        await wait_until(lambda: _completed(app, store.id))

        assert await chunks(app, file_id=file_id) > 0


_AUTO = '{"max_chunk_size_tokens": 800, "chunk_overlap_tokens": 400}'


def _values(row: StoreFileRow) -> dict[str, object]:
    return {
        "vector_store_id": row.vector_store_id,
        "file_id": row.file_id,
        "created_at": row.created_at,
        "status": row.status,
        "attributes": row.attributes,
        "chunking_strategy": row.chunking_strategy,
    }


async def _completed(app: Starlette, store_id: str) -> bool:
    return await count(app, VSF, vector_store_id=store_id, status="completed") == 1


async def _queue(app: Starlette, store_id: str, file_id: str) -> None:
    """The file's ingestion job, queued as attaching the file queues it."""

    def write(conn: sa.Connection) -> None:
        queue_ingestion(conn, Project(DEFAULT_PROJECT), store_id, [file_id])

    await runtime(app).database.runner.write(write)
