"""A server that starts loads the indexes of the recently used stores before any search."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentloom.config import Settings, VectorStoreSettings
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import make_settings
from tests.server.vector_support import WAIT, runtime, serving, upload


def _settings(backend: FakeBackend, database_url: str, files: Path, *, warm: int) -> Settings:
    settings = make_settings(backend, database_url, files_directory=files)
    tuned = VectorStoreSettings(poll_after_ms=20, warm_stores=warm)
    return settings.model_copy(update={"vector_stores": tuned})


async def test_a_restarted_server_loads_recent_indexes_before_the_first_search(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    first = _settings(backend, database_url, tmp_path, warm=20)
    async with serving(first) as (_, client):
        idle = await client.vector_stores.create(name="idle")
        used = await client.vector_stores.create(name="used")
        for store, text in ((idle, "Cake needs eggs."), (used, "The kettle boils water.")):
            file_id = await upload(client, "doc.txt", text)
            await client.vector_stores.files.create_and_poll(
                file_id=file_id, vector_store_id=store.id
            )

    async with serving(_settings(backend, database_url, tmp_path, warm=1)) as (app, _):
        service = runtime(app).vector_stores
        await asyncio.wait_for(service.warmed.wait(), WAIT)

        assert service.cache.stores() == [used.id]  # the idle one is not loaded (warm_stores 1)
        assert service.cache.chunks == 1


async def test_warming_can_be_turned_off(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    async with serving(_settings(backend, database_url, tmp_path, warm=20)) as (_, client):
        store = await client.vector_stores.create(name="docs")
        file_id = await upload(client, "doc.txt", "The kettle boils water.")
        await client.vector_stores.files.create_and_poll(file_id=file_id, vector_store_id=store.id)

    async with serving(_settings(backend, database_url, tmp_path, warm=0)) as (app, client):
        await asyncio.wait_for(runtime(app).vector_stores.warmed.wait(), WAIT)
        assert runtime(app).vector_stores.cache.chunks == 0
        await client.vector_stores.search(store.id, query="kettle")
        assert runtime(app).vector_stores.cache.chunks == 1
