"""Image content in messages, on both paths: what goes on the wire and what the model is given."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agentloom.agents.saved_history import message_from_json, message_to_json
from agentloom.errors import InvalidRequestError
from agentloom.inference.base import ImagePart, TextPart
from agentloom.inference.scripted import ScriptedModel
from agentloom.llm import LLM, ImageContent, InvalidContentError, Message, TextContent
from agentloom.testing.backend import FakeBackend
from tests.llm.conftest import MakeLLM

PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PHOTO = "https://example.com/cat.jpg"


def question() -> Message:
    return Message.user(
        [
            TextContent("What is in these images?"),
            ImageContent(PHOTO),
            ImageContent.from_bytes(PIXEL, "image/png", detail="low"),
        ]
    )


@pytest.fixture
async def chat_llm(backend: FakeBackend) -> AsyncIterator[LLM]:
    async with LLM(backend.model, base_url=backend.base_url, max_retries=0) as llm:
        yield llm


async def test_images_on_chat_completions(
    chat_llm: LLM, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("A cat and a pixel.")

    reply = await chat_llm.acompletion([Message.system("Be brief."), question()])

    assert reply.text == "A cat and a pixel."
    content = backend.last_request["messages"][1]["content"]
    assert content[0] == {"type": "text", "text": "What is in these images?"}
    assert content[1] == {"type": "image_url", "image_url": {"url": PHOTO, "detail": "auto"}}
    assert content[2]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
    assert content[2]["image_url"]["detail"] == "low"


async def test_images_on_responses(
    server_llm: MakeLLM, scripted: ScriptedModel, wire: list[dict[str, Any]]
) -> None:
    scripted.add_turn("A cat and a pixel.")

    reply = await server_llm().aresponses([question()])

    assert reply.text == "A cat and a pixel."
    content = wire[0]["input"][0]["content"]
    assert content[0] == {"type": "input_text", "text": "What is in these images?"}
    assert content[1] == {"type": "input_image", "image_url": PHOTO, "detail": "auto"}
    assert content[2]["image_url"].startswith("data:image/png;base64,iVBOR")
    parts = scripted.requests[-1].messages[-1].content
    assert isinstance(parts, tuple)
    assert parts[0] == TextPart("What is in these images?")
    assert isinstance(parts[1], ImagePart)
    assert parts[1].url == PHOTO


def test_an_image_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "pixel.png"
    path.write_bytes(PIXEL)

    image = ImageContent.from_file(path)

    assert image.url == "data:image/png;base64," + base64.b64encode(PIXEL).decode()
    assert "..." in repr(image) or len(repr(image)) < 120  # a long data URL is shortened


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("ftp://example.com/cat.jpg", "http(s) or a data URL"),
        ("data:text/plain;base64,aGk=", "data:image/<type>;base64"),
        ("data:image/png,notbase64", "data:image/<type>;base64"),
        ("data:image/png;base64,***", "not base64"),
        ("data:image/png;base64,", "no data"),
    ],
)
def test_a_bad_image_url_is_refused(url: str, says: str) -> None:
    with pytest.raises(InvalidContentError, match=says.replace("(", r"\(").replace(")", r"\)")):
        ImageContent(url)


def test_images_only_in_user_messages() -> None:
    with pytest.raises(InvalidRequestError, match="assistant message cannot hold an image"):
        Message("assistant", (ImageContent(PHOTO),))
    with pytest.raises(InvalidContentError, match="detail"):
        ImageContent(PHOTO, detail="huge")  # type: ignore[arg-type]


def test_text_of_a_message_with_parts() -> None:
    message = Message.user([TextContent("one "), ImageContent(PHOTO), TextContent("two")])

    assert message.text == "one two"
    assert Message.user("plain").parts == (TextContent("plain"),)


def test_a_message_with_images_is_saved_and_read_back() -> None:
    message = question()

    assert message_from_json(message_to_json(message)) == message
