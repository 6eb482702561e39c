"""``/v1/containers`` through the official client: containers, their files (uploaded, copied
from /v1/files, and written by code_interpreter), downloads, deletion and expiry."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import openai
import pytest
from starlette.applications import Starlette

from agentloom.config import CodeInterpreterSettings, Settings
from agentloom.inference.scripted import ScriptedModel, tool_call
from agentloom.server.runtime import Runtime
from agentloom.testing.backend import FakeBackend
from agentloom.tools.sandbox import bwrap_available
from tests.plugins.server import make_settings

pytestmark = [
    pytest.mark.both_databases,
    pytest.mark.skipif(not bwrap_available(), reason="bubblewrap is not installed"),
]


@pytest.fixture
def settings(backend: FakeBackend, database_url: str, tmp_path: Path) -> Settings:
    base = make_settings(backend, database_url, files_directory=tmp_path / "files")
    code = CodeInterpreterSettings(directory=tmp_path / "containers", wall_seconds=5)
    return base.model_copy(update={"code_interpreter": code})


async def test_create_list_retrieve_delete(client: openai.AsyncOpenAI) -> None:
    created = await client.containers.create(
        name="work", expires_after={"anchor": "last_active_at", "minutes": 5}
    )
    other = await client.containers.create(name="other")

    assert created.id.startswith("cntr_")
    assert created.status == "running"
    assert created.expires_after is not None
    assert created.expires_after.minutes == 5
    assert (await client.containers.retrieve(created.id)).name == "work"
    listed = await client.containers.list()
    assert [c.id for c in listed.data] == [other.id, created.id]

    await client.containers.delete(created.id)

    with pytest.raises(openai.NotFoundError):
        await client.containers.retrieve(created.id)
    assert [c.id for c in (await client.containers.list()).data] == [other.id]


async def test_files_uploaded_copied_and_downloaded(client: openai.AsyncOpenAI) -> None:
    uploaded = await client.files.create(file=("notes.txt", b"from files"), purpose="assistants")
    container = await client.containers.create(name="c", file_ids=[uploaded.id])

    added = await client.containers.files.create(container.id, file=("data.csv", b"a,b\n"))

    assert added.path == "/mnt/data/data.csv"
    assert added.source == "user"
    assert added.bytes == 4
    listed = await client.containers.files.list(container.id, order="asc")
    assert sorted(f.path for f in listed.data) == ["/mnt/data/data.csv", "/mnt/data/notes.txt"]
    content = await client.containers.files.content.retrieve(added.id, container_id=container.id)
    assert content.read() == b"a,b\n"
    got = await client.containers.files.retrieve(added.id, container_id=container.id)
    assert got.id == added.id

    await client.containers.files.delete(added.id, container_id=container.id)

    with pytest.raises(openai.NotFoundError):
        await client.containers.files.retrieve(added.id, container_id=container.id)


async def test_files_the_code_writes_are_listed_and_downloadable(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    container = await client.containers.create(name="c")
    scripted.add_turn(tool_call("code_interpreter", {"code": "open('out.txt','w').write('42')"}))
    scripted.add_turn("Written.")

    response = await client.responses.create(
        model=backend.model,
        input="Write it",
        tools=[{"type": "code_interpreter", "container": container.id}],
    )

    assert response.output[0].container_id == container.id  # type: ignore[union-attr]
    files = (await client.containers.files.list(container.id)).data
    assert [(f.path, f.source) for f in files] == [("/mnt/data/out.txt", "assistant")]
    content = await client.containers.files.content.retrieve(files[0].id, container_id=container.id)
    assert content.read() == b"42"


async def test_auto_containers_are_listed(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("code_interpreter", {"code": "print(1)"}))
    scripted.add_turn("Done.")
    tools: Any = [{"type": "code_interpreter", "container": {"type": "auto"}}]

    response = await client.responses.create(model=backend.model, input="Run", tools=tools)

    listed = await client.containers.list()
    assert [c.id for c in listed.data] == [response.output[0].container_id]  # type: ignore[union-attr]


async def test_idle_containers_expire(client: openai.AsyncOpenAI, app: Starlette) -> None:
    runtime: Runtime = app.state.runtime
    assert runtime.containers is not None
    idle = await client.containers.create(
        name="idle", expires_after={"anchor": "last_active_at", "minutes": 1}
    )
    busy = await client.containers.create(name="busy")
    await runtime.database.containers.touch(idle.id, now=time.time() - 120)

    deleted = await runtime.containers.delete_idle()

    assert deleted == 1
    assert [c.id for c in (await client.containers.list()).data] == [busy.id]
    with pytest.raises(openai.NotFoundError):
        await client.containers.files.list(idle.id)


@pytest.mark.parametrize(
    "container_id", ["cntr_" + "0" * 32, "../etc", "cntr_../../x"], ids=["unknown", "dots", "path"]
)
async def test_unknown_or_malformed_ids_are_404(
    client: openai.AsyncOpenAI, container_id: str
) -> None:
    with pytest.raises(openai.NotFoundError):
        await client.containers.retrieve(container_id)
    with pytest.raises(openai.NotFoundError):
        await client.containers.files.list(container_id)


async def test_bad_bodies_are_400(client: openai.AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as no_name:
        await client.containers.create(name="")
    assert no_name.value.body["param"] == "name"  # type: ignore[index]
    with pytest.raises(openai.NotFoundError) as no_file:
        await client.containers.create(name="x", file_ids=["file-nope"])
    assert no_file.value.body["param"] == "file_ids[0]"  # type: ignore[index]


async def test_a_link_the_code_makes_is_not_served(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    container = await client.containers.create(name="c")
    link = "import os\nos.symlink('/etc/hostname', 'host')\nopen('real.txt', 'w').write('x')"
    scripted.add_turn(tool_call("code_interpreter", {"code": link}))
    scripted.add_turn("Done.")

    await client.responses.create(
        model=backend.model,
        input="Link",
        tools=[{"type": "code_interpreter", "container": container.id}],
    )

    files = (await client.containers.files.list(container.id)).data
    assert [f.path for f in files] == ["/mnt/data/real.txt"]
