"""The local blob store: files under ``root/<2 hex>/<2 hex>/<key>``, written atomically (also
chunk by chunk from a stream, where a failure or a cancellation half-way leaves nothing), keys
that cannot leave the root."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from agentloom.storage.blobs import (
    BLOB_STORES,
    BlobNotFoundError,
    LocalBlobStore,
    build_blob_store,
)


def files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


async def test_put_get_delete(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path)

    await store.put("file-abc", b"first")
    await store.put("file-abc", b"second")  # replaces
    stored = await store.get("file-abc")
    await store.delete("file-abc")
    await store.delete("file-abc")  # deleting nothing is fine

    assert stored == b"second"
    with pytest.raises(BlobNotFoundError):
        await store.get("file-abc")
    assert files_under(tmp_path) == []


async def test_layout_is_two_levels_of_hex_then_the_key(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path)

    await store.put("file-1", b"x")

    [path] = files_under(tmp_path)
    first, second, name = path.relative_to(tmp_path).parts
    assert name == "file-1"
    assert len(first) == len(second) == 2
    int(first + second, 16)
    assert path == store.path("file-1")


async def chunks_of(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def test_put_stream_writes_the_chunks_in_order(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path)

    await store.put("file-abc", b"old")
    await store.put_stream("file-abc", chunks_of(b"one ", b"", b"two ", b"three"))

    assert await store.get("file-abc") == b"one two three"
    assert files_under(tmp_path) == [store.path("file-abc")]


async def test_a_stream_that_fails_half_way_stores_nothing(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path)
    await store.put("file-abc", b"old")

    async def failing() -> AsyncIterator[bytes]:
        yield b"partial data"
        raise OSError("the source broke")

    with pytest.raises(OSError, match="the source broke"):
        await store.put_stream("file-abc", failing())

    assert await store.get("file-abc") == b"old"  # the old blob stays
    assert files_under(tmp_path) == [store.path("file-abc")]  # no temporary file left


async def test_a_cancelled_stream_stores_nothing(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path)
    written = anyio.Event()

    async def stalled() -> AsyncIterator[bytes]:
        yield b"first chunk"
        written.set()
        await anyio.sleep_forever()
        yield b"never"

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(store.put_stream, "file-abc", stalled())
        await written.wait()
        assert len(files_under(tmp_path)) == 1  # the temporary file, mid-write
        tasks.cancel_scope.cancel()

    assert files_under(tmp_path) == []
    with pytest.raises(BlobNotFoundError):
        await store.get("file-abc")


@pytest.mark.parametrize(
    "key", ["../escape", "a/b", "a\\b", "..", ".hidden", "", "x" * 201, "a..b", "nul\x00"]
)
async def test_keys_that_could_leave_the_root_are_refused(tmp_path: Path, key: str) -> None:
    store = LocalBlobStore(tmp_path / "root")

    with pytest.raises(ValueError, match="invalid blob key"):
        await store.put(key, b"x")
    with pytest.raises(ValueError, match="invalid blob key"):
        await store.put_stream(key, chunks_of(b"x"))
    assert not (tmp_path / "root").exists()


def test_stores_are_built_from_the_table(tmp_path: Path) -> None:
    assert isinstance(build_blob_store("local", tmp_path), LocalBlobStore)
    assert set(BLOB_STORES) == {"local"}
    with pytest.raises(ValueError, match="unknown blob store"):
        build_blob_store("s3", tmp_path)
