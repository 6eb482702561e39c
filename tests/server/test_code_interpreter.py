"""The code_interpreter tool in responses: the model writes Python, the server runs it in the
real bubblewrap sandbox, streams the call's events and tells the model the output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from openai.types.responses import Response as SDKResponse

from agentloom.config import CodeInterpreterSettings, Settings
from agentloom.inference.base import ChatMessage
from agentloom.inference.scripted import ScriptedModel, tool_call
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import make_settings

pytestmark = pytest.mark.usefixtures("requires_sandbox")  # the real sandbox, in CI too

AUTO = {"type": "code_interpreter", "container": {"type": "auto"}}


@pytest.fixture
def settings(backend: FakeBackend, database_url: str, tmp_path: Path) -> Settings:
    base = make_settings(backend, database_url, files_directory=tmp_path / "files")
    code = CodeInterpreterSettings(
        directory=tmp_path / "containers", wall_seconds=5, cpu_seconds=5, output_kb=64
    )
    return base.model_copy(update={"code_interpreter": code})


def _run(code: str) -> Any:
    return tool_call("code_interpreter", {"code": code})


def _tool_message(scripted: ScriptedModel, turn: int = 1) -> ChatMessage:
    return next(m for m in scripted.requests[turn].messages if m.role == "tool")


async def test_the_model_runs_code_and_is_told_its_output(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(_run("print(sum(range(10)))"))
    scripted.add_turn("The sum is 45.")

    response = await client.responses.create(
        model=backend.model,
        input="Sum 0..9",
        tools=[AUTO],  # type: ignore[list-item]
        include=["code_interpreter_call.outputs"],
    )

    call, message = response.output
    assert call.type == "code_interpreter_call"
    assert call.status == "completed"
    assert call.id.startswith("ci_")
    assert call.code == "print(sum(range(10)))"
    assert call.container_id.startswith("cntr_")
    assert call.outputs is not None
    assert [(o.type, getattr(o, "logs", None)) for o in call.outputs] == [("logs", "45\n")]
    assert message.type == "message"
    told = _tool_message(scripted).content
    assert isinstance(told, str)
    assert "Exit status: 0" in told
    assert "45" in told


async def test_outputs_are_kept_only_when_included(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(_run("print('hi')"))
    scripted.add_turn("Done.")

    response = await client.responses.create(
        model=backend.model,
        input="Say hi",
        tools=[AUTO],  # type: ignore[list-item]
    )

    assert response.output[0].type == "code_interpreter_call"
    assert response.output[0].outputs is None


async def test_streamed_events_in_order(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(_run("print(2 + 2)"))
    scripted.add_turn("Four.")

    stream = await client.responses.create(
        model=backend.model,
        input="2 + 2?",
        tools=[AUTO],  # type: ignore[list-item]
        include=["code_interpreter_call.outputs"],
        stream=True,
    )
    events = [event async for event in stream]

    kinds = [e.type for e in events]
    ours = [k for k in kinds if "code_interpreter" in k]
    assert ours == [
        "response.code_interpreter_call.in_progress",
        "response.code_interpreter_call_code.delta",
        "response.code_interpreter_call_code.done",
        "response.code_interpreter_call.interpreting",
        "response.code_interpreter_call.completed",
    ]
    added = kinds.index("response.output_item.added")
    assert kinds.index("response.code_interpreter_call.in_progress") > added
    assert [e.sequence_number for e in events] == list(range(len(events)))
    final = events[-1]
    assert final.type == "response.completed"
    assert final.response.output[0].type == "code_interpreter_call"


async def test_files_are_copied_in_and_calls_share_the_container(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    uploaded = await client.files.create(file=("data.csv", b"a,b\n1,2\n"), purpose="assistants")
    scripted.add_turn(_run("open('result.txt', 'w').write(open('data.csv').read().upper())"))
    scripted.add_turn(_run("import os\nprint(sorted(os.listdir('.')), open('result.txt').read())"))
    scripted.add_turn("Done.")

    response = await client.responses.create(
        model=backend.model,
        input="Upper-case the file",
        tools=[
            {"type": "code_interpreter", "container": {"type": "auto", "file_ids": [uploaded.id]}}
        ],
        include=["code_interpreter_call.outputs"],
    )

    first, second, _ = response.output
    assert first.type == second.type == "code_interpreter_call"
    assert first.container_id == second.container_id
    assert second.outputs is not None
    assert second.outputs[0].logs == "['data.csv', 'result.txt'] A,B\n1,2\n\n"  # type: ignore[union-attr]
    told = _tool_message(scripted).content
    assert isinstance(told, str)
    assert "Files in /mnt/data: data.csv, result.txt" in told


async def test_a_later_response_reuses_the_container_by_id(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(_run("open('kept.txt', 'w').write('still here')"))
    scripted.add_turn("Saved.")
    first = await client.responses.create(
        model=backend.model,
        input="Save",
        tools=[AUTO],  # type: ignore[list-item]
    )
    container = first.output[0].container_id  # type: ignore[union-attr]
    scripted.add_turn(_run("print(open('kept.txt').read())"))
    scripted.add_turn("Read.")

    second = await client.responses.create(
        model=backend.model,
        input="Read",
        tools=[{"type": "code_interpreter", "container": container}],
        include=["code_interpreter_call.outputs"],
    )

    assert second.output[0].container_id == container  # type: ignore[union-attr]
    assert second.output[0].outputs[0].logs == "still here\n"  # type: ignore[union-attr,index]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import socket\nsocket.create_connection(('127.0.0.1', 5432), timeout=2)", "Error"),
        ("print(open('/etc/passwd').read())", "FileNotFoundError"),
        ("x = bytearray(10 * 1024**3)", "MemoryError"),
        ("import sys\nwhile True: sys.stdout.write('x' * 65536)", "printed more than"),
        ("while True: pass", "Killed"),
        (
            "import os\nwhile True:\n    if os.fork() == 0:\n        import time; time.sleep(30)",
            "BlockingIOError",
        ),
    ],
    ids=["socket", "passwd", "10gb", "1gb-print", "forever", "fork-bomb"],
)
async def test_escapes_are_contained_and_the_server_carries_on(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    code: str,
    expected: str,
) -> None:
    scripted.add_turn(_run(code))
    scripted.add_turn("Contained.")
    scripted.add_turn(_run("print('alive')"))
    scripted.add_turn("Alive.")

    attempt = await client.responses.create(
        model=backend.model,
        input="Try",
        tools=[AUTO],  # type: ignore[list-item]
    )
    after = await client.responses.create(
        model=backend.model,
        input="Again",
        tools=[AUTO],  # type: ignore[list-item]
        include=["code_interpreter_call.outputs"],
    )

    assert attempt.status == "completed"
    assert attempt.output[0].status == "completed"  # type: ignore[union-attr]
    told = _tool_message(scripted).content
    assert isinstance(told, str)
    assert expected in told, told
    assert after.output[0].outputs[0].logs == "alive\n"  # type: ignore[union-attr,index]


async def test_an_unknown_container_or_file_is_a_404(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    with pytest.raises(openai.NotFoundError) as missing:
        await client.responses.create(
            model=backend.model,
            input="Run",
            tools=[{"type": "code_interpreter", "container": "cntr_" + "0" * 32}],
        )
    assert missing.value.body["param"] == "tools[0].container"  # type: ignore[index]
    with pytest.raises(openai.NotFoundError) as no_file:
        await client.responses.create(
            model=backend.model,
            input="Run",
            tools=[
                {
                    "type": "code_interpreter",
                    "container": {"type": "auto", "file_ids": ["file-nope"]},
                }
            ],
        )
    assert no_file.value.body["param"] == "tools[0].container.file_ids[0]"  # type: ignore[index]


async def test_bad_arguments_fail_the_item_not_the_response(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("code_interpreter", {"code": ""}))
    scripted.add_turn("Sorry.")

    response = await client.responses.create(
        model=backend.model,
        input="Run",
        tools=[AUTO],  # type: ignore[list-item]
    )

    assert response.status == "completed"
    assert response.output[0].status == "failed"  # type: ignore[union-attr]
    told = _tool_message(scripted).content
    assert isinstance(told, str)
    assert told.startswith("Error:")


async def test_the_wire_shape_parses_strictly(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(_run("print(1)"))
    scripted.add_turn("One.")

    reply = await http.post(
        "/responses",
        json={
            "model": backend.model,
            "input": "Print one",
            "tools": [AUTO],
            "include": ["code_interpreter_call.outputs"],
        },
    )

    assert reply.status_code == 200, reply.text
    body = reply.json()
    SDKResponse.model_validate(body, strict=True)
    assert body["tools"][0]["container"]["type"] == "auto"
    assert body["output"][0]["outputs"] == [{"type": "logs", "logs": "1\n"}]


async def test_without_bubblewrap_the_tool_is_a_400(
    client: openai.AsyncOpenAI, backend: FakeBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # no bwrap, and the fallback is not allowed

    with pytest.raises(openai.BadRequestError) as error:
        await client.responses.create(
            model=backend.model,
            input="Run",
            tools=[AUTO],  # type: ignore[list-item]
        )

    assert error.value.code == "sandbox_unavailable"
    assert "bubblewrap" in error.value.message


async def test_a_later_turn_shows_the_model_the_earlier_run(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(_run("print(6 * 7)"))
    scripted.add_turn("42.")
    first = await client.responses.create(
        model=backend.model,
        input="Multiply",
        tools=[AUTO],  # type: ignore[list-item]
        include=["code_interpreter_call.outputs"],
    )
    scripted.add_turn("It was 42.")

    await client.responses.create(
        model=backend.model, input="What was it?", previous_response_id=first.id
    )

    messages = scripted.requests[-1].messages
    call = next(m for m in messages if m.tool_calls)
    assert call.tool_calls[0].name == "code_interpreter"
    assert call.tool_calls[0].arguments == '{"code": "print(6 * 7)"}'
    told = next(m for m in messages if m.role == "tool")
    assert told.content == "42\n"


async def test_the_servers_venv_packages_are_importable(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(_run("import numpy; print(numpy.arange(3).sum())"))
    scripted.add_turn("Three.")

    response = await client.responses.create(
        model=backend.model,
        input="Sum",
        tools=[AUTO],  # type: ignore[list-item]
        include=["code_interpreter_call.outputs"],
    )

    assert response.output[0].outputs[0].logs == "3\n"  # type: ignore[union-attr,index]


class TestAMissingPackageDirectory:
    @pytest.fixture
    def settings(self, settings: Settings, tmp_path: Path) -> Settings:
        code = settings.code_interpreter.model_copy(update={"packages": [tmp_path / "nowhere"]})
        return settings.model_copy(update={"code_interpreter": code})

    async def test_is_a_400(self, client: openai.AsyncOpenAI, backend: FakeBackend) -> None:
        with pytest.raises(openai.BadRequestError) as error:
            await client.responses.create(
                model=backend.model,
                input="Run",
                tools=[AUTO],  # type: ignore[list-item]
            )

        assert error.value.code == "sandbox_unavailable"
        assert "nowhere is not a directory" in error.value.message
