"""The filesystem holding uploaded files' bytes is full.

A real full filesystem: a small ``tmpfs`` mounted as ``[files] directory`` (root may mount one;
elsewhere the test is skipped, saying why). An upload that does not fit answers OpenAI's
envelope, 507 ``insufficient_storage``, within a bound; nothing of it is left (no partial
blob, no file row); the server serves on, and uploads fit again once space is freed.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anyio
import httpx2
import openai
import pytest

from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import BASE_URL, make_settings, running

KIB = 1024
SIZE = 512 * KIB  # the filesystem's size
BOUND = 20.0  # seconds: a test still running after this has hung


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A ``SIZE`` tmpfs mounted for the test (unmounted after)."""
    mount = tmp_path / "files"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (CI runs as root)")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SIZE}", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


@pytest.fixture
async def raw(
    backend: FakeBackend, database_url: str, full_disk: Path
) -> AsyncIterator[httpx2.AsyncClient]:
    settings = make_settings(backend, database_url, files_directory=full_disk)
    async with running(create_app(settings)) as app:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url=BASE_URL) as http:
            yield http


@pytest.fixture
def client(raw: httpx2.AsyncClient) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=BASE_URL, api_key="unused", http_client=raw, max_retries=0)


def _stored(directory: Path) -> list[Path]:
    """Every file under the blob directory (temporary files included)."""
    return sorted(p for p in directory.rglob("*") if p.is_file())


async def _upload(raw: httpx2.AsyncClient, size: int, name: str = "data.bin") -> httpx2.Response:
    files = {"file": (name, os.urandom(size), "application/octet-stream")}
    return await raw.post("/files", files=files, data={"purpose": "assistants"})


def _insufficient(reply: httpx2.Response) -> None:
    assert reply.status_code == 507, reply.text
    error = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "server_error"
    assert error["code"] == "insufficient_storage"
    assert "file storage is full" in error["message"]
    assert "Traceback" not in reply.text


async def test_an_upload_larger_than_the_space_left_leaves_nothing(
    raw: httpx2.AsyncClient, client: openai.AsyncOpenAI, full_disk: Path
) -> None:
    with anyio.fail_after(BOUND):
        too_big = await _upload(raw, 2 * SIZE)
        listed = await client.files.list()
        fits = await _upload(raw, SIZE // 4, "fits.bin")

    _insufficient(too_big)
    assert listed.data == []  # no row
    assert fits.status_code == 200, fits.text  # nothing of the failed one took the space
    assert [p.name for p in _stored(full_disk)] == [fits.json()["id"]]


async def test_uploads_fit_again_once_space_is_freed(
    raw: httpx2.AsyncClient, client: openai.AsyncOpenAI, full_disk: Path
) -> None:
    filler = full_disk / "filler"
    with anyio.fail_after(BOUND):
        first = (await _upload(raw, SIZE // 4)).json()["id"]
        filler.write_bytes(b"\0" * (SIZE - SIZE // 4 - 16 * KIB))  # the disk is now full
        refused = await _upload(raw, 64 * KIB)
        filler.unlink()
        accepted = await _upload(raw, 64 * KIB)
        content = await client.files.content(first)

    _insufficient(refused)
    assert accepted.status_code == 200, accepted.text
    assert len(content.content) == SIZE // 4  # what was stored before is intact
    ids = {f.id async for f in client.files.list()}
    assert ids == {first, accepted.json()["id"]}
