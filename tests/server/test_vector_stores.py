"""The Vector Stores API through the official client: stores, their files and file batches."""

from __future__ import annotations

from typing import Any

import httpx2
import openai
import pytest
from openai.types import VectorStore, VectorStoreDeleted, VectorStoreSearchResponse
from openai.types.vector_stores import (
    VectorStoreFile,
    VectorStoreFileBatch,
    VectorStoreFileDeleted,
)
from openai.types.vector_stores.file_content_response import FileContentResponse
from starlette.applications import Starlette

from tests.server.vector_support import chunks, upload

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

KETTLE = "The Zephyr kettle boils a litre of water in ninety seconds."
CAKE = "Lemon cake needs four eggs, two lemons and a cup of sugar."


async def test_a_store_is_created_read_updated_and_deleted(client: openai.AsyncOpenAI) -> None:
    created = await client.vector_stores.create(
        name="docs",
        metadata={"team": "a"},
        expires_after={"anchor": "last_active_at", "days": 2},
    )

    assert created.id.startswith("vs_")
    assert created.status == "completed"
    assert created.file_counts.total == 0
    assert created.last_active_at is not None
    assert created.expires_at == created.last_active_at + 2 * 86_400
    assert (await client.vector_stores.retrieve(created.id)) == created

    renamed = await client.vector_stores.update(created.id, name="handbook", metadata={"t": "b"})
    assert (renamed.name, renamed.metadata) == ("handbook", {"t": "b"})
    assert renamed.expires_after == created.expires_after
    unexpiring = await client.vector_stores.update(created.id, expires_after=None)
    assert (unexpiring.expires_after, unexpiring.expires_at) == (None, None)
    assert unexpiring.name == "handbook"

    deleted = await client.vector_stores.delete(created.id)
    assert (deleted.id, deleted.deleted) == (created.id, True)
    with pytest.raises(openai.NotFoundError) as missing:
        await client.vector_stores.retrieve(created.id)
    assert missing.value.body["param"] == "vector_store_id"  # type: ignore[index]


async def test_files_named_at_creation_are_ingested_in_the_background(
    client: openai.AsyncOpenAI,
) -> None:
    first = await upload(client, "kettle.txt", KETTLE)
    second = await upload(client, "cake.md", CAKE)

    store = await client.vector_stores.create(name="docs", file_ids=[first, second, first])

    assert store.status == "in_progress"
    assert (store.file_counts.in_progress, store.file_counts.total) == (2, 2)
    for file_id in (first, second):
        done = await client.vector_stores.files.poll(file_id, vector_store_id=store.id)
        assert done.status == "completed", done.last_error
        assert done.usage_bytes > 0
    ready = await client.vector_stores.retrieve(store.id)
    assert ready.status == "completed"
    counts = ready.file_counts
    assert (counts.completed, counts.in_progress, counts.failed, counts.total) == (2, 0, 0, 2)
    assert ready.usage_bytes > 0


async def test_create_and_poll_and_upload_and_poll(client: openai.AsyncOpenAI) -> None:
    store = await client.vector_stores.create(name="docs")
    file_id = await upload(client, "kettle.txt", KETTLE)

    attached = await client.vector_stores.files.create_and_poll(
        file_id=file_id, vector_store_id=store.id, attributes={"kind": "manual"}
    )
    uploaded = await client.vector_stores.files.upload_and_poll(
        vector_store_id=store.id, file=("cake.md", CAKE.encode())
    )
    batch = await client.vector_stores.file_batches.upload_and_poll(
        store.id,
        files=[("a.txt", b"alpha bravo charlie"), ("b.txt", b"delta echo foxtrot")],
    )

    assert attached.id == file_id
    assert (attached.status, attached.attributes) == ("completed", {"kind": "manual"})
    assert uploaded.status == "completed"
    assert batch.status == "completed"
    assert (batch.file_counts.completed, batch.file_counts.total) == (2, 2)
    listed = await client.vector_stores.files.list(vector_store_id=store.id)
    assert len(listed.data) == 4
    assert (await client.vector_stores.retrieve(store.id)).file_counts.completed == 4
    stores = await client.vector_stores.list()
    assert [(s.id, s.file_counts.completed, s.file_counts.total) for s in stores.data] == [
        (store.id, 4, 4)
    ]


async def test_stores_are_listed_in_pages(client: openai.AsyncOpenAI) -> None:
    ids = [(await client.vector_stores.create(name=f"s{n}")).id for n in range(3)]

    first = await client.vector_stores.list(limit=2, order="asc")
    rest = await client.vector_stores.list(limit=2, order="asc", after=first.data[-1].id)
    newest = await client.vector_stores.list(limit=1)
    before = await client.vector_stores.list(limit=5, order="asc", before=ids[2])

    assert [s.id for s in first.data] == ids[:2]
    assert first.has_more
    assert [s.id for s in rest.data] == ids[2:]
    assert not rest.has_more
    assert [s.id for s in newest.data] == ids[2:]
    assert [s.id for s in before.data] == ids[:2]
    with pytest.raises(openai.NotFoundError):
        await client.vector_stores.list(after="vs_missing")


async def test_attaching_a_file_twice_returns_the_attached_file(
    client: openai.AsyncOpenAI,
) -> None:
    store = await client.vector_stores.create(name="docs")
    file_id = await upload(client, "kettle.txt", KETTLE)
    first = await client.vector_stores.files.create_and_poll(
        file_id=file_id, vector_store_id=store.id, attributes={"v": 1}
    )

    again = await client.vector_stores.files.create(
        file_id=file_id, vector_store_id=store.id, attributes={"v": 2}
    )

    assert again == first
    assert (await client.vector_stores.retrieve(store.id)).file_counts.total == 1


async def test_attributes_are_validated_and_updated(client: openai.AsyncOpenAI) -> None:
    store = await client.vector_stores.create(name="docs")
    file_id = await upload(client, "kettle.txt", KETTLE)
    too_many: dict[str, str | float | bool] = {f"k{n}": "v" for n in range(17)}

    for bad in (too_many, {"k": "x" * 513}, {"k" * 65: "v"}, {"k": {"nested": 1}}):
        with pytest.raises(openai.BadRequestError) as refused:
            await client.vector_stores.files.create(
                file_id=file_id,
                vector_store_id=store.id,
                attributes=bad,  # type: ignore[arg-type]
            )
        assert refused.value.body["param"].startswith("attributes")  # type: ignore[index]
    # ingested first: the file's status must not change between the update and the retrieve
    await client.vector_stores.files.create_and_poll(
        file_id=file_id, vector_store_id=store.id, attributes={"year": 2024, "draft": True}
    )
    updated = await client.vector_stores.files.update(
        file_id, vector_store_id=store.id, attributes={"year": 2025, "tag": "x"}
    )

    assert updated.attributes == {"year": 2025, "tag": "x"}
    assert (await client.vector_stores.files.retrieve(file_id, vector_store_id=store.id)) == updated


def _static(size: int, overlap: int) -> dict[str, Any]:
    tokens = {"max_chunk_size_tokens": size, "chunk_overlap_tokens": overlap}
    return {"type": "static", "static": tokens}


@pytest.mark.parametrize(
    ("strategy", "param"),
    [
        (_static(99, 0), "chunking_strategy.static.max_chunk_size_tokens"),
        (_static(4097, 0), "chunking_strategy.static.max_chunk_size_tokens"),
        (_static(200, 101), "chunking_strategy.static"),
        ({"type": "smart"}, "chunking_strategy.type"),
    ],
)
async def test_bad_chunking_strategies_are_refused(
    client: openai.AsyncOpenAI, strategy: Any, param: str
) -> None:
    store = await client.vector_stores.create(name="docs")
    file_id = await upload(client, "kettle.txt", KETTLE)

    with pytest.raises(openai.BadRequestError) as refused:
        await client.vector_stores.files.create(
            file_id=file_id, vector_store_id=store.id, chunking_strategy=strategy
        )

    assert refused.value.body["param"] == param  # type: ignore[index]


async def test_the_chunking_strategy_is_shown_resolved(client: openai.AsyncOpenAI) -> None:
    store = await client.vector_stores.create(name="docs")
    auto = await upload(client, "kettle.txt", KETTLE)
    static = await upload(client, "cake.md", CAKE)
    custom: Any = {"max_chunk_size_tokens": 200, "chunk_overlap_tokens": 100}

    by_default = await client.vector_stores.files.create(file_id=auto, vector_store_id=store.id)
    chosen = await client.vector_stores.files.create(
        file_id=static,
        vector_store_id=store.id,
        chunking_strategy={"type": "static", "static": custom},
    )

    assert by_default.chunking_strategy is not None
    assert by_default.chunking_strategy.model_dump() == {
        "type": "static",
        "static": {"max_chunk_size_tokens": 800, "chunk_overlap_tokens": 400},
    }
    assert chosen.chunking_strategy is not None
    assert chosen.chunking_strategy.model_dump() == {"type": "static", "static": custom}


async def test_files_are_listed_by_status_and_page(client: openai.AsyncOpenAI) -> None:
    store = await client.vector_stores.create(name="docs")
    good = [await upload(client, f"f{n}.txt", f"note {n} about kettles") for n in range(3)]
    bad = await upload(client, "broken.pdf", b"%PDF-1.4\nnot really a pdf")
    await client.vector_stores.file_batches.create_and_poll(store.id, file_ids=[*good, bad])

    completed = await client.vector_stores.files.list(vector_store_id=store.id, filter="completed")
    failed = await client.vector_stores.files.list(vector_store_id=store.id, filter="failed")
    page = await client.vector_stores.files.list(vector_store_id=store.id, limit=2, order="asc")
    after = await client.vector_stores.files.list(
        vector_store_id=store.id, limit=2, order="asc", after=page.data[-1].id
    )

    assert sorted(f.id for f in completed.data) == sorted(good)
    assert [f.id for f in failed.data] == [bad]
    assert [f.id for f in page.data] == good[:2]
    assert page.has_more
    assert [f.id for f in after.data] == [good[2], bad]
    assert not after.has_more
    with pytest.raises(openai.BadRequestError) as refused:
        await client.vector_stores.files.list(vector_store_id=store.id, filter="done")  # type: ignore[arg-type]
    assert refused.value.body["param"] == "filter"  # type: ignore[index]


async def test_batches_take_per_file_attributes_and_list_their_files(
    client: openai.AsyncOpenAI,
) -> None:
    store = await client.vector_stores.create(name="docs")
    first = await upload(client, "a.txt", "alpha bravo")
    second = await upload(client, "b.txt", "charlie delta")
    outside = await upload(client, "c.txt", "echo foxtrot")
    await client.vector_stores.files.create_and_poll(file_id=outside, vector_store_id=store.id)

    batch = await client.vector_stores.file_batches.create_and_poll(
        store.id,
        files=[
            {"file_id": first, "attributes": {"n": 1}},
            {"file_id": second, "attributes": {"n": 2}},
        ],
    )
    listed = await client.vector_stores.file_batches.list_files(batch.id, vector_store_id=store.id)
    shared = await client.vector_stores.file_batches.create_and_poll(
        store.id, file_ids=[first, second], attributes={"shared": True}
    )

    assert batch.id.startswith("vsfb_")
    assert (batch.status, batch.file_counts.completed, batch.file_counts.total) == (
        "completed",
        2,
        2,
    )
    assert {f.id: f.attributes for f in listed.data} == {first: {"n": 1}, second: {"n": 2}}
    # files already in the store stay as they are, and count in the new batch
    assert (shared.file_counts.completed, shared.file_counts.total) == (2, 2)
    assert (await client.vector_stores.retrieve(store.id)).file_counts.total == 3


async def test_a_batch_gives_file_ids_or_files(http: httpx2.AsyncClient) -> None:
    store = (await http.post("/vector_stores", json={"name": "docs"})).json()
    path = f"/vector_stores/{store['id']}/file_batches"

    both = await http.post(path, json={"file_ids": ["file-a"], "files": [{"file_id": "file-b"}]})
    neither = await http.post(path, json={})
    empty = await http.post(path, json={"file_ids": []})

    assert [r.status_code for r in (both, neither, empty)] == [400, 400, 400]


async def test_the_content_of_a_file_is_its_parsed_text(client: openai.AsyncOpenAI) -> None:
    store = await client.vector_stores.create(name="docs")
    html = b"<html><head><script>x()</script></head><body><p>Hello kettle</p></body></html>"
    file_id = await upload(client, "page.html", html)
    await client.vector_stores.files.create_and_poll(file_id=file_id, vector_store_id=store.id)

    page = await client.vector_stores.files.content(file_id, vector_store_id=store.id)

    texts = [part.text or "" for part in page.data]
    assert "Hello kettle" in "".join(texts)
    assert "x()" not in "".join(texts)


async def test_unknown_ids_are_404s_that_name_the_parameter(client: openai.AsyncOpenAI) -> None:
    store = await client.vector_stores.create(name="docs")
    known = await upload(client, "kettle.txt", KETTLE)
    vs = client.vector_stores

    cases: list[tuple[Any, str]] = [
        (vs.retrieve("vs_missing"), "vector_store_id"),
        (vs.update("vs_missing", name="x"), "vector_store_id"),
        (vs.delete("vs_missing"), "vector_store_id"),
        (vs.search("vs_missing", query="kettle"), "vector_store_id"),
        (vs.files.create(file_id=known, vector_store_id="vs_missing"), "vector_store_id"),
        (vs.files.list(vector_store_id="vs_missing"), "vector_store_id"),
        (vs.files.create(file_id="file-missing", vector_store_id=store.id), "file_id"),
        (vs.files.retrieve(known, vector_store_id=store.id), "file_id"),
        (vs.files.delete(known, vector_store_id=store.id), "file_id"),
        (vs.files.update(known, vector_store_id=store.id, attributes={}), "file_id"),
        (vs.files.content(known, vector_store_id=store.id), "file_id"),
        (vs.create(name="x", file_ids=[known, "file-missing"]), "file_ids[1]"),
        (vs.file_batches.create(store.id, file_ids=[known, "file-nope"]), "file_ids[1]"),
        (vs.file_batches.create(store.id, files=[{"file_id": "file-x"}]), "files[0].file_id"),
        (vs.file_batches.retrieve("vsfb_missing", vector_store_id=store.id), "batch_id"),
        (vs.file_batches.cancel("vsfb_missing", vector_store_id=store.id), "batch_id"),
        (vs.file_batches.list_files("vsfb_missing", vector_store_id=store.id), "batch_id"),
    ]
    for call, param in cases:
        with pytest.raises(openai.NotFoundError) as missing:
            await call
        assert missing.value.body["param"] == param  # type: ignore[index]

    assert [s.id for s in (await vs.list()).data] == [store.id]  # the failed create left nothing
    assert (await vs.retrieve(store.id)).file_counts.total == 0


async def test_what_the_server_sends_parses_into_the_sdk_types(
    http: httpx2.AsyncClient, client: openai.AsyncOpenAI
) -> None:
    file_id = await upload(client, "kettle.txt", KETTLE)
    store = (
        await http.post("/vector_stores", json={"name": "docs", "metadata": {"a": "b"}})
    ).json()
    base = f"/vector_stores/{store['id']}"
    attached = (await http.post(f"{base}/files", json={"file_id": file_id})).json()
    batch = (await http.post(f"{base}/file_batches", json={"file_ids": [file_id]})).json()
    await client.vector_stores.files.poll(file_id, vector_store_id=store["id"])

    VectorStore.model_validate(store, strict=True)
    VectorStore.model_validate((await http.get(base)).json(), strict=True)
    VectorStoreFile.model_validate(attached, strict=True)
    VectorStoreFile.model_validate((await http.get(f"{base}/files/{file_id}")).json(), strict=True)
    VectorStoreFileBatch.model_validate(batch, strict=True)
    found = (await http.post(f"{base}/search", json={"query": "kettle"})).json()
    assert found["object"] == "vector_store.search_results.page"
    assert found["search_query"] == ["kettle"]
    assert (found["has_more"], found["next_page"]) == (False, None)
    assert found["data"]
    for item in found["data"]:
        VectorStoreSearchResponse.model_validate(item, strict=True)
    content = (await http.get(f"{base}/files/{file_id}/content")).json()
    assert content["object"] == "vector_store.file_content.page"
    for part in content["data"]:
        FileContentResponse.model_validate(part, strict=True)
    removed = (await http.delete(f"{base}/files/{file_id}")).json()
    VectorStoreFileDeleted.model_validate(removed, strict=True)
    VectorStoreDeleted.model_validate((await http.delete(base)).json(), strict=True)


async def test_removing_a_file_from_a_store_removes_its_chunks_only(
    app: Starlette, client: openai.AsyncOpenAI
) -> None:
    store = await client.vector_stores.create(name="docs")
    kept = await upload(client, "cake.md", CAKE)
    removed = await upload(client, "kettle.txt", KETTLE)
    for file_id in (kept, removed):
        await client.vector_stores.files.create_and_poll(file_id=file_id, vector_store_id=store.id)
    assert await chunks(app, vector_store_id=store.id, file_id=removed) > 0

    deleted = await client.vector_stores.files.delete(removed, vector_store_id=store.id)

    assert deleted.deleted
    assert await chunks(app, vector_store_id=store.id, file_id=removed) == 0
    assert await chunks(app, vector_store_id=store.id, file_id=kept) > 0
    assert (await client.files.retrieve(removed)).id == removed  # the File itself stays
    found = await client.vector_stores.search(
        store.id, query="kettle water litre", max_num_results=50
    )
    assert {r.file_id for r in found.data} == {kept}
