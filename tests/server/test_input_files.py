"""Uploaded files in responses: ``input_file`` / ``input_image`` parts with a ``file_id`` show the
model the file's text (or the image), in new input, in history, in conversations and in prompt
variables; unknown or unusable files are errors naming the part."""

from __future__ import annotations

import base64
from typing import Any, cast

import httpx2
import openai
import pytest
from openai.types.responses import ResponseInputParam, ResponsePromptParam

from agentloom.inference.base import ChatMessage, ImagePart, TextPart
from agentloom.inference.scripted import ScriptedModel
from agentloom.testing.backend import FakeBackend
from tests.retrieval.documents import docx_bytes, pdf_bytes

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgAAIAAAUAAeImBZsAAAAASUVORK5CYII="
)


def user_turn(*parts: dict[str, Any]) -> ResponseInputParam:
    return cast("ResponseInputParam", [{"role": "user", "content": list(parts)}])


def text(value: str) -> dict[str, Any]:
    return {"type": "input_text", "text": value}


def file_part(file_id: str, **extra: Any) -> dict[str, Any]:
    return {"type": "input_file", "file_id": file_id, **extra}


def last_user_message(backend: FakeBackend) -> ChatMessage:
    return [m for m in backend.chat_requests[-1].messages if m.role == "user"][-1]


async def upload(client: openai.AsyncOpenAI, name: str, data: bytes) -> str:
    created = await client.files.create(file=(name, data), purpose="user_data")
    return created.id


async def test_the_model_reads_an_uploaded_text_file(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    file_id = await upload(client, "notes.txt", b"The launch code is 1234.")
    scripted.add_turn("Noted")

    response = await client.responses.create(
        model=backend.model,
        input=user_turn(text("Summarise:"), file_part(file_id)),
    )

    assert last_user_message(backend) == ChatMessage(
        role="user", content="Summarise:\n[file: notes.txt]\nThe launch code is 1234.\n"
    )
    # the stored input keeps the reference, not the text
    items = await client.responses.input_items.list(response.id)
    message = items.data[0]
    assert message.type == "message"
    assert message.content[1].model_dump(exclude_none=True) == {
        "type": "input_file",
        "file_id": file_id,
    }


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("paper.pdf", pdf_bytes("Page one says hello.", "Page two."), "Page one says hello."),
        ("memo.docx", docx_bytes(["Memo title", "Budget approved."]), "Budget approved."),
        ("data.json", b'{"answer":42}', '"answer": 42'),
        ("page.html", b"<p>Visible</p><script>hidden()</script>", "Visible"),
    ],
)
async def test_documents_reach_the_model_as_text(
    client: openai.AsyncOpenAI, backend: FakeBackend, name: str, data: bytes, expected: str
) -> None:
    file_id = await upload(client, name, data)

    await client.responses.create(model=backend.model, input=user_turn(file_part(file_id)))

    content = last_user_message(backend).content
    assert isinstance(content, str)
    assert content.startswith(f"[file: {name}]\n")
    assert expected in content
    assert "hidden()" not in content


async def test_the_part_filename_labels_the_file(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    file_id = await upload(client, "upload.txt", b"body")

    await client.responses.create(
        model=backend.model, input=user_turn(file_part(file_id, filename="Contract"))
    )

    assert last_user_message(backend).content == "[file: Contract]\nbody\n"


async def test_file_errors_name_the_part(
    http: httpx2.AsyncClient, client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    binary = await upload(client, "blob.bin", bytes(range(256)) * 8)
    notes = await upload(client, "notes.txt", b"words")
    cases = [
        (file_part("file-nope"), 404, "not_found"),
        (file_part(await upload(client, "gone.txt", b"x")), 404, "deleted"),
        (file_part(binary), 400, "unsupported_file"),
        ({"type": "input_image", "file_id": notes}, 400, "invalid_value"),
        ({"type": "input_file"}, 400, None),
    ]
    await client.files.delete(cases[1][0]["file_id"])
    for part, status, code in cases:
        body = {"model": backend.model, "input": user_turn(text("look"), part)}
        reply = await http.post("/responses", json=body)
        assert reply.status_code == status, (part, reply.text)
        error = reply.json()["error"]
        assert error["param"].startswith("input[0].content[1]"), error
        if status == 400 and code is not None:
            assert error["code"] == code
    # a text file read as input_file is still no image
    both = user_turn(file_part(notes), {"type": "input_image", "file_id": notes})
    reply = await http.post("/responses", json={"model": backend.model, "input": both})
    assert reply.status_code == 400
    assert reply.json()["error"]["param"] == "input[0].content[1].file_id"
    assert backend.chat_requests == []


async def test_an_image_file_is_given_to_the_model_as_a_data_url(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    image_id = await upload(client, "dot.png", PNG)
    data_url = "data:image/png;base64," + base64.b64encode(PNG).decode()

    await client.responses.create(
        model=backend.model,
        input=user_turn(
            text("What is this?"),
            {"type": "input_image", "file_id": image_id, "detail": "low"},
            file_part(image_id),
        ),
    )

    assert last_user_message(backend).content == (
        TextPart("What is this?"),
        ImagePart(url=data_url, detail="low"),
        ImagePart(url=data_url),
    )


async def test_history_shows_the_file_again_on_later_turns(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    file_id = await upload(client, "facts.txt", b"Paris is in France.")
    scripted.add_turn("Read it")
    scripted.add_turn("Paris")
    first = await client.responses.create(model=backend.model, input=user_turn(file_part(file_id)))

    await client.responses.create(
        model=backend.model, input="Where is Paris?", previous_response_id=first.id
    )

    contents = [m.content for m in backend.chat_requests[-1].messages if m.role == "user"]
    assert contents == ["[file: facts.txt]\nParis is in France.\n", "Where is Paris?"]


async def test_conversation_items_show_their_files_and_deleted_files_are_noted(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    kept = await upload(client, "kept.txt", b"Still here.")
    dropped = await upload(client, "dropped.txt", b"Soon gone.")
    conversation = await client.conversations.create(
        items=cast(Any, user_turn(file_part(kept), file_part(dropped)))
    )
    await client.files.delete(dropped)

    await client.responses.create(model=backend.model, input="And?", conversation=conversation.id)

    contents = [m.content for m in backend.chat_requests[-1].messages if m.role == "user"]
    assert contents == [
        f"[file: kept.txt]\nStill here.\n[file: {dropped}: no longer available]\n",
        "And?",
    ]


async def test_a_prompt_variable_may_name_a_file(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    file_id = await upload(client, "guide.md", b"# Style guide\nBe brief.")
    prompt = await client.post("/prompts", cast_to=dict, body={"prompt": "Follow {{guide}}."})
    variables = {"guide": file_part(file_id)}
    param = cast("ResponsePromptParam", {"id": prompt["id"], "variables": variables})

    await client.responses.create(model=backend.model, input="Go", prompt=param)

    messages = backend.chat_requests[-1].messages
    assert messages[0] == ChatMessage(role="system", content="Follow [file: guide].")
    assert messages[1] == ChatMessage(
        role="user", content="[file: guide]\n# Style guide\nBe brief.\n"
    )
    assert messages[2] == ChatMessage(role="user", content="Go")


async def test_an_unknown_file_in_a_prompt_variable_is_a_404(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    prompt = await client.post("/prompts", cast_to=dict, body={"prompt": "Use {{doc}}."})
    param = cast(
        "ResponsePromptParam", {"id": prompt["id"], "variables": {"doc": file_part("file-nope")}}
    )

    with pytest.raises(openai.NotFoundError) as raised:
        await client.responses.create(model=backend.model, input="Go", prompt=param)

    assert raised.value.param == "prompt.variables"  # type: ignore[attr-defined]
    assert backend.chat_requests == []
