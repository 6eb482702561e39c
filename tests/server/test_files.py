"""The Files API through the official client: upload, retrieve, list (paging, purpose), download
(safe headers), delete (hooks, bytes removed), limits, sanitised names and expiry, on SQLite and
PostgreSQL."""

from __future__ import annotations

import hashlib
import io
import random
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx2
import openai
import pytest
import sqlalchemy as sa
from openai.types import FileDeleted, FileObject
from starlette.applications import Starlette

from agentloom.config import Settings
from agentloom.errors import InvalidRequestError, PayloadTooLargeError
from agentloom.ids import new_id
from agentloom.retrieval import parsing
from agentloom.server.app import create_app
from agentloom.server.runtime import Runtime, housekeep
from agentloom.services.files import CHUNK_BYTES
from agentloom.storage import schema
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import BASE_URL, make_settings, running
from tests.retrieval.documents import docx_bytes, pdf_bytes, with_member

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

MIB = 1024 * 1024


def runtime(app: Starlette) -> Runtime:
    value: Runtime = app.state.runtime
    return value


def blobs(settings: Settings) -> list[Path]:
    """Every file in the blob directory (temporary files included)."""
    return sorted(p for p in settings.files.directory.rglob("*") if p.is_file())


def the_error(reply: httpx2.Response, status: int) -> dict[str, Any]:
    assert reply.status_code == status, reply.text
    error: dict[str, Any] = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return error


async def upload(
    client: openai.AsyncOpenAI,
    data: bytes = b"hello files",
    name: str = "notes.txt",
    purpose: Any = "assistants",
    **extra: Any,
) -> FileObject:
    return await client.files.create(file=(name, data, "text/plain"), purpose=purpose, **extra)


async def expire(app: Starlette, file_id: str) -> None:
    """Move the file's expiry into the past."""
    files = schema.files
    update = files.update().where(files.c.id == file_id).values(expires_at=time.time() - 1)
    await runtime(app).database.runner.write(lambda conn: conn.execute(update))


async def stored_type_and_digest(app: Starlette, file_id: str) -> tuple[str, str]:
    files = schema.files
    query = sa.select(files.c.content_type, files.c.sha256).where(files.c.id == file_id)
    row = await runtime(app).database.runner.read(lambda conn: conn.execute(query).one())
    return row.content_type, row.sha256


# --- the whole life of a file ----------------------------------------------------------------


async def test_upload_retrieve_download_delete(
    client: openai.AsyncOpenAI, settings: Settings
) -> None:
    before = int(time.time())
    created = await upload(client, b"line one\nline two\n", "notes.txt", "user_data")

    assert isinstance(created, FileObject)
    assert created.id.startswith("file-")
    assert (created.object, created.status, created.expires_at) == ("file", "processed", None)
    assert (created.filename, created.purpose, created.bytes) == ("notes.txt", "user_data", 18)
    assert before <= created.created_at <= time.time()
    assert await client.files.retrieve(created.id) == created

    content = await client.files.content(created.id)
    assert content.content == b"line one\nline two\n"
    assert content.response.headers["content-type"] == "text/plain; charset=utf-8"

    deleted = await client.files.delete(created.id)
    assert deleted == FileDeleted(id=created.id, object="file", deleted=True)
    assert blobs(settings) == []
    with pytest.raises(openai.NotFoundError):
        await client.files.retrieve(created.id)


async def test_replies_validate_as_the_sdk_types(http: httpx2.AsyncClient) -> None:
    files = {"file": ("a.txt", b"abc", "text/plain")}
    created = await http.post("/files", data={"purpose": "assistants"}, files=files)
    file_id = created.json()["id"]

    FileObject.model_validate(created.json())
    FileObject.model_validate((await http.get(f"/files/{file_id}")).json())
    page = (await http.get("/files")).json()
    assert (page["object"], page["has_more"], page["first_id"]) == ("list", False, file_id)
    for item in page["data"]:
        FileObject.model_validate(item)
    FileDeleted.model_validate((await http.delete(f"/files/{file_id}")).json())


async def test_bytes_live_in_the_blob_directory_under_a_key_of_the_file_id(
    client: openai.AsyncOpenAI, settings: Settings
) -> None:
    created = await upload(client, b"stored bytes")

    [blob] = blobs(settings)
    relative = blob.relative_to(settings.files.directory)
    assert relative.name == created.id
    assert [len(part) for part in relative.parts[:2]] == [2, 2]
    assert blob.read_bytes() == b"stored bytes"


async def test_downloads_are_attachments_of_the_sniffed_type(
    client: openai.AsyncOpenAI, http: httpx2.AsyncClient
) -> None:
    pdf = await client.files.create(
        file=("report.txt", pdf_bytes("Hello"), "text/html"), purpose="assistants"
    )
    page = await client.files.create(
        file=("page.html", b"<html><script>alert(1)</script></html>", "application/pdf"),
        purpose="user_data",
    )

    pdf_reply = await http.get(f"/files/{pdf.id}/content")
    page_reply = await http.get(f"/files/{page.id}/content")

    assert pdf_reply.headers["content-type"] == "application/pdf"  # not what the client said
    assert pdf_reply.content == pdf_bytes("Hello")
    assert page_reply.headers["content-type"] == "text/plain; charset=utf-8"  # never as HTML
    for reply, name in ((pdf_reply, "report.txt"), (page_reply, "page.html")):
        assert reply.headers["content-disposition"].startswith(f'attachment; filename="{name}"')
        assert reply.headers["x-content-type-options"] == "nosniff"
        assert "sandbox" in reply.headers["content-security-policy"]


async def test_a_large_docx_is_sniffed_from_its_central_directory(
    client: openai.AsyncOpenAI, http: httpx2.AsyncClient
) -> None:
    noise = random.Random(3).randbytes(2 * MIB)  # the zip's directory is 2 MiB in
    data = with_member(docx_bytes(["Hello"]), "word/media/noise.bin", noise)

    created = await client.files.create(file=("upload.bin", data), purpose="assistants")
    reply = await http.get(f"/files/{created.id}/content")

    assert len(data) > 2 * MIB
    assert reply.headers["content-type"] == parsing.DOCX
    assert reply.content == data


@pytest.mark.parametrize(
    ("raw", "stored"),
    [
        ("../../etc/passwd", "passwd"),
        ("..\\..\\Windows\\win.ini", "win.ini"),
        ("/abs/path/../x.txt", "x.txt"),
        ("..", "file"),
        ("<script>x</script>.html", "script_.html"),
        ("a<b>c|d?.md", "a_b_c_d_.md"),
        ("résumé final.pdf", "résumé final.pdf"),
    ],
)
async def test_filenames_are_sanitised(
    client: openai.AsyncOpenAI, http: httpx2.AsyncClient, settings: Settings, raw: str, stored: str
) -> None:
    created = await upload(client, name=raw)

    assert created.filename == stored
    assert (await client.files.retrieve(created.id)).filename == stored
    [blob] = blobs(settings)
    assert blob.name == created.id
    disposition = (await http.get(f"/files/{created.id}/content")).headers["content-disposition"]
    assert disposition.startswith("attachment; filename=")
    assert "/" not in disposition
    assert "\\" not in disposition


async def test_control_characters_in_a_raw_filename_are_dropped(
    http: httpx2.AsyncClient,
) -> None:
    name = "bad\x01\x7fname\u200b\u202e.txt"  # sent as is: the SDK would percent-encode
    body = (
        '--b\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nassistants\r\n'
        f'--b\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n\r\n'
        "x\r\n--b--\r\n"
    ).encode()

    reply = await http.post(
        "/files", content=body, headers={"content-type": "multipart/form-data; boundary=b"}
    )

    assert reply.status_code == 200, reply.text
    assert reply.json()["filename"] == "badname.txt"


async def test_a_long_filename_is_cut_keeping_its_extension(client: openai.AsyncOpenAI) -> None:
    created = await upload(client, name="é" * 300 + ".txt")

    assert created.filename.endswith(".txt")
    assert len(created.filename.encode()) <= 255
    assert created.filename.startswith("ééé")


# --- bad uploads -----------------------------------------------------------------------------


async def test_an_unknown_purpose_is_a_400(client: openai.AsyncOpenAI, settings: Settings) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        await upload(client, purpose="sharing")

    assert raised.value.status_code == 400
    assert raised.value.param == "purpose"  # type: ignore[attr-defined]
    assert blobs(settings) == []


@pytest.mark.parametrize(
    ("fields", "files", "param", "code"),
    [
        ({"purpose": "assistants"}, {"attachment": ("a.txt", b"x")}, "file", None),
        ({"purpose": "assistants", "file": "not a file part"}, {"x": ("a", b"x")}, "file", None),
        ({}, {"file": ("a.txt", b"x")}, "purpose", "missing_required_parameter"),
        ({"purpose": "assistants"}, {"file": ("a.txt", b"")}, "file", "empty_file"),
        (
            {"purpose": "assistants", "expires_after[anchor]": "created_at"},
            {"file": ("a.txt", b"x")},
            "expires_after.seconds",
            "missing_required_parameter",
        ),
        (
            {"purpose": "batch", "expires_after[anchor]": "now", "expires_after[seconds]": "3600"},
            {"file": ("a.txt", b"x")},
            "expires_after.anchor",
            "invalid_value",
        ),
        (
            {
                "purpose": "batch",
                "expires_after[anchor]": "created_at",
                "expires_after[seconds]": "60",
            },
            {"file": ("a.txt", b"x")},
            "expires_after.seconds",
            "invalid_value",
        ),
    ],
)
async def test_malformed_uploads_are_400s(
    http: httpx2.AsyncClient,
    settings: Settings,
    fields: dict[str, str],
    files: dict[str, tuple[str, bytes]],
    param: str,
    code: str | None,
) -> None:
    error = the_error(await http.post("/files", data=fields, files=files), 400)

    assert error["param"] == param
    if code is not None:
        assert error["code"] == code
    assert blobs(settings) == []


async def test_a_body_that_is_not_multipart_is_a_400(http: httpx2.AsyncClient) -> None:
    error = the_error(await http.post("/files", json={"purpose": "assistants"}), 400)

    assert "multipart/form-data" in error["message"]


# --- size limits -----------------------------------------------------------------------------


@pytest.fixture
async def small_app(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> AsyncIterator[tuple[Settings, httpx2.AsyncClient]]:
    """An app whose JSON body limit is 1 MiB and whose files may be up to 2 MiB."""
    settings = make_settings(
        backend,
        database_url,
        max_body_bytes=MIB,
        files_directory=tmp_path / "small",
        files_max_bytes=2 * MIB,
    )
    async with running(create_app(settings)) as app:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url=BASE_URL) as raw:
            yield settings, raw


async def test_files_have_their_own_size_limit(
    small_app: tuple[Settings, httpx2.AsyncClient],
) -> None:
    settings, http = small_app
    async with openai.AsyncOpenAI(base_url=BASE_URL, api_key="x", http_client=http) as client:
        fits = await upload(client, b"a" * (2 * MIB))  # over the JSON limit: still accepted
        with pytest.raises(openai.APIStatusError) as raised:
            await upload(client, b"a" * (2 * MIB + 1))

    assert fits.bytes == 2 * MIB
    assert raised.value.status_code == 413
    error = raised.value.body
    assert isinstance(error, dict)
    assert (error["type"], error["param"], error["code"]) == (
        "invalid_request_error",
        "file",
        "request_too_large",
    )
    assert [p.name for p in blobs(settings)] == [fits.id]


async def test_reading_stops_once_an_upload_passes_the_limit(
    small_app: tuple[Settings, httpx2.AsyncClient],
) -> None:
    _, http = small_app
    boundary = "b0undary"
    chunk = b"x" * (64 * 1024)
    total = 200  # 12.5 MiB, far over the limit
    sent = 0

    async def body() -> AsyncIterator[bytes]:
        nonlocal sent
        yield (
            f'--{boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nassistants\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n'
            "Content-Type: text/plain\r\n\r\n"
        ).encode()
        for _ in range(total):
            sent += 1
            yield chunk
        yield f"\r\n--{boundary}--\r\n".encode()

    headers = {"content-type": f"multipart/form-data; boundary={boundary}"}
    reply = await http.post("/files", content=body(), headers=headers)

    assert the_error(reply, 413)["code"] == "request_too_large"
    assert sent < total


async def test_a_declared_length_over_the_limit_is_refused_unread(
    small_app: tuple[Settings, httpx2.AsyncClient],
) -> None:
    _, http = small_app
    headers = {
        "content-type": "multipart/form-data; boundary=x",
        "content-length": str(100 * MIB),
    }

    request = http.build_request("POST", "/files", content=b"", headers=headers)
    request.headers["content-length"] = str(100 * MIB)
    reply = await http.send(request)

    assert reply.status_code == 413


class PeakMemory:
    """The most memory Python allocated (in any thread) while the ``with`` block ran."""

    peak = 0

    def __enter__(self) -> PeakMemory:
        self._started = not tracemalloc.is_tracing()
        if self._started:
            tracemalloc.start()
        self._base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.peak = tracemalloc.get_traced_memory()[1] - self._base
        if self._started:
            tracemalloc.stop()


async def multipart_upload(chunk: bytes, count: int) -> AsyncIterator[bytes]:
    """A multipart body whose file is ``chunk`` ``count`` times, sent as it is made."""
    yield (
        b'--b\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nassistants\r\n'
        b'--b\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n\r\n'
    )
    for _ in range(count):
        yield chunk
    yield b"\r\n--b--\r\n"


@pytest.fixture
async def roomy_app(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> AsyncIterator[tuple[Starlette, Settings, httpx2.AsyncClient]]:
    """An app whose files may be up to 128 MiB."""
    settings = make_settings(
        backend, database_url, files_directory=tmp_path / "roomy", files_max_bytes=128 * MIB
    )
    async with running(create_app(settings)) as app:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url=BASE_URL) as raw:
            yield app, settings, raw


async def test_a_large_upload_streams_to_disk_in_bounded_memory(
    roomy_app: tuple[Starlette, Settings, httpx2.AsyncClient],
) -> None:
    app, settings, http = roomy_app
    chunk = b"0123456789abcdef" * 4096  # 64 KiB, sent 1024 times: a 64 MiB text file
    expected = hashlib.sha256()
    for _ in range(1024):
        expected.update(chunk)
    headers = {"content-type": "multipart/form-data; boundary=b"}

    with PeakMemory() as memory:
        reply = await http.post("/files", content=multipart_upload(chunk, 1024), headers=headers)

    assert reply.status_code == 200, reply.text
    assert memory.peak < 8 * MIB  # the old, read-it-all upload peaked at 128 MiB
    created = FileObject.model_validate(reply.json())
    assert created.bytes == 64 * MIB
    assert await stored_type_and_digest(app, created.id) == (parsing.TEXT, expected.hexdigest())
    [blob] = blobs(settings)
    with blob.open("rb") as stored:
        assert hashlib.file_digest(stored, "sha256").hexdigest() == expected.hexdigest()


class BrokenFile(io.BytesIO):
    """A file whose reads fail once they pass the first chunk (a failing disk)."""

    def read(self, size: int | None = -1, /) -> bytes:
        if self.tell() >= CHUNK_BYTES:
            raise OSError("the disk went away")
        return super().read(size)


async def test_an_upload_that_fails_half_way_leaves_no_bytes_and_no_row(
    client: openai.AsyncOpenAI, app: Starlette, settings: Settings
) -> None:
    upload = BrokenFile(bytes(range(256)) * (3 * CHUNK_BYTES // 256))

    with pytest.raises(OSError, match="the disk went away"):
        await runtime(app).files.create(upload, "broken.bin", "assistants")

    assert upload.tell() >= CHUNK_BYTES  # the first chunk was stored before the failure
    assert blobs(settings) == []
    assert (await client.files.list()).data == []


@pytest.mark.parametrize(
    ("size", "error"), [(0, InvalidRequestError), (8 * MIB + 1, PayloadTooLargeError)]
)
async def test_the_service_refuses_empty_and_oversized_files_before_storing(
    client: openai.AsyncOpenAI,
    app: Starlette,
    settings: Settings,
    size: int,
    error: type[Exception],
) -> None:
    files = runtime(app).files

    with pytest.raises(error):
        await files.create(io.BytesIO(b"x" * size), "a.txt", "assistants")

    assert files.max_bytes == 8 * MIB
    assert blobs(settings) == []
    assert (await client.files.list()).data == []


# --- unknown files ---------------------------------------------------------------------------


@pytest.mark.parametrize("file_id", ["file-nope", "file_123", "file-" + "0" * 48])
async def test_unknown_files_are_404s(client: openai.AsyncOpenAI, file_id: str) -> None:
    calls = (client.files.retrieve, client.files.content, client.files.delete)
    for call in calls:
        with pytest.raises(openai.NotFoundError) as raised:
            await call(file_id)
        assert raised.value.param == "file_id"  # type: ignore[attr-defined]


async def test_a_file_is_deleted_once(client: openai.AsyncOpenAI) -> None:
    created = await upload(client)
    await client.files.delete(created.id)

    with pytest.raises(openai.NotFoundError):
        await client.files.delete(created.id)
    with pytest.raises(openai.NotFoundError):
        await client.files.content(created.id)


async def test_delete_hooks_run_while_the_file_still_exists(
    client: openai.AsyncOpenAI, app: Starlette
) -> None:
    seen: list[tuple[str, bool]] = []
    files = runtime(app).files

    async def hook(file_id: str) -> None:
        seen.append((file_id, (await files.get(file_id)).id == file_id))

    files.on_delete.append(hook)
    created = await upload(client)
    await client.files.delete(created.id)

    assert seen == [(created.id, True)]


# --- the list --------------------------------------------------------------------------------


async def test_list_pages_by_creation_with_after_limit_order_and_purpose(
    client: openai.AsyncOpenAI,
) -> None:
    purposes = ["assistants", "user_data", "assistants", "batch", "assistants"]
    ids = [(await upload(client, name=f"{i}.txt", purpose=p)).id for i, p in enumerate(purposes)]

    everything = await client.files.list()
    first = await client.files.list(order="asc", limit=2)
    second = await client.files.list(order="asc", limit=2, after=first.data[-1].id)
    last = await client.files.list(order="asc", limit=2, after=second.data[-1].id)
    assistants = await client.files.list(purpose="assistants")
    walked = [f.id async for f in client.files.list(limit=2, order="asc")]

    assert [f.id for f in everything.data] == ids[::-1]
    assert not everything.has_more
    assert ([f.id for f in first.data], first.has_more) == (ids[:2], True)
    assert ([f.id for f in second.data], second.has_more) == (ids[2:4], True)
    assert ([f.id for f in last.data], last.has_more) == (ids[4:], False)
    assert [f.id for f in assistants.data] == [ids[4], ids[2], ids[0]]
    assert walked == ids


async def test_list_parameter_errors(http: httpx2.AsyncClient) -> None:
    cases = [
        ({"limit": "0"}, 400, "limit"),
        ({"limit": "10001"}, 400, "limit"),
        ({"order": "sideways"}, 400, "order"),
        ({"after": "file-nope"}, 404, "after"),
        ({"after": new_id("file", separator="-")}, 404, "after"),
    ]
    for query, status, param in cases:
        assert the_error(await http.get("/files", params=query), status)["param"] == param
    assert (await http.get("/files", params={"limit": "10000"})).status_code == 200


# --- expiry ----------------------------------------------------------------------------------


async def test_expires_after_sets_expires_at(client: openai.AsyncOpenAI) -> None:
    created = await upload(
        client, purpose="batch", expires_after={"anchor": "created_at", "seconds": 7200}
    )

    assert created.expires_at is not None
    assert created.expires_at - created.created_at == 7200
    assert (await client.files.retrieve(created.id)).expires_at == created.expires_at


async def test_an_expired_file_is_gone_and_housekeeping_deletes_it(
    client: openai.AsyncOpenAI, app: Starlette, settings: Settings
) -> None:
    kept = await upload(client, b"kept", "kept.txt")
    expiring = await upload(
        client, b"old", "old.txt", expires_after={"anchor": "created_at", "seconds": 3600}
    )
    hooked: list[str] = []

    async def hook(file_id: str) -> None:
        hooked.append(file_id)

    runtime(app).files.on_delete.append(hook)
    await expire(app, expiring.id)

    for call in (client.files.retrieve, client.files.content, client.files.delete):
        with pytest.raises(openai.NotFoundError):
            await call(expiring.id)
    assert [f.id for f in (await client.files.list()).data] == [kept.id]
    assert len(blobs(settings)) == 2  # not deleted yet

    assert await runtime(app).files.delete_expired() == 1
    assert await runtime(app).files.delete_expired() == 0
    assert hooked == [expiring.id]
    assert [p.name for p in blobs(settings)] == [kept.id]
    assert (await client.files.content(kept.id)).content == b"kept"


RENAME = "ALTER TABLE %s RENAME TO %s"


async def test_housekeeping_survives_a_database_error_and_deletes_later(
    client: openai.AsyncOpenAI,
    app: Starlette,
    settings: Settings,
    caplog: pytest.LogCaptureFixture,
) -> None:
    expiring = await upload(
        client, b"old", "old.txt", expires_after={"anchor": "created_at", "seconds": 3600}
    )
    await expire(app, expiring.id)
    database = runtime(app).database

    await database.runner.write(
        lambda conn: conn.execute(sa.text("ALTER TABLE files RENAME TO f2"))
    )
    try:
        await housekeep(runtime(app))  # the files table is gone: logged, not raised
    finally:
        await database.runner.write(
            lambda conn: conn.execute(sa.text("ALTER TABLE f2 RENAME TO files"))
        )
    assert "housekeeping failed" in caplog.text
    assert len(blobs(settings)) == 1

    await housekeep(runtime(app))

    assert blobs(settings) == []
