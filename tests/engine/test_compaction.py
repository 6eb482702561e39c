"""Compaction, step by step: what a summary replaces, and what the summariser reads."""

from __future__ import annotations

import pytest

from agentloom.api.items import STORED_ITEM, StoredItem
from agentloom.engine.compaction import Compactions, transcript, turn_start
from agentloom.engine.messages import Summary, visible
from agentloom.errors import InvalidRequestError, UpstreamError
from agentloom.inference.scripted import ScriptedModel
from agentloom.sealing import Sealer, SealingKey

COMPACTIONS = Compactions(Sealer([SealingKey.new()]))


def item(data: dict[str, object]) -> StoredItem:
    return STORED_ITEM.validate_python({"status": "completed", **data})


def user(item_id: str, text: str = "u") -> StoredItem:
    return item({"type": "message", "id": item_id, "role": "user", "content": text})


def assistant(item_id: str, text: str = "a") -> StoredItem:
    return item({"type": "message", "id": item_id, "role": "assistant", "content": text})


def compaction(through: str | None) -> StoredItem:
    return COMPACTIONS.item(Summary("summary", through))


def ids(items: list[StoredItem], shown: list[int]) -> list[str | None]:
    return [items[i].id if items[i].type != "compaction" else "C" for i in shown]


def test_a_summary_replaces_everything_up_to_its_item_and_stands_there() -> None:
    items = [user("u1"), assistant("a1"), user("u2"), assistant("a2"), compaction("a1")]

    shown = visible(items, COMPACTIONS.read, first_new=len(items))

    assert ids(items, shown) == ["C", "u2", "a2"]


def test_without_its_item_a_summary_keeps_the_input_messages_before_it() -> None:
    items = [user("u1"), assistant("a1"), user("u2"), compaction("gone"), user("u3")]

    shown = visible(items, COMPACTIONS.read, first_new=len(items))

    assert ids(items, shown) == ["u1", "u2", "C", "u3"]


def test_only_the_latest_summary_counts() -> None:
    items = [user("u1"), compaction(None), assistant("a1"), user("u2"), compaction("a1")]

    shown = visible(items, COMPACTIONS.read, first_new=len(items))

    assert ids(items, shown) == ["C", "u2"]


def test_the_current_turn_starts_at_the_last_user_message() -> None:
    assert turn_start([user("u1"), assistant("a1"), user("u2")], COMPACTIONS.read) == 2
    assert turn_start([assistant("a1")], COMPACTIONS.read) == 0  # no user message
    # nothing but a summary before the turn: nothing worth compacting again
    assert turn_start([compaction(None), user("u2")], COMPACTIONS.read) == 0


def test_the_transcript_tells_every_kind_of_item() -> None:
    items = [
        item(
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "look"},
                    {"type": "input_image", "image_url": "https://example.com/a.png"},
                    {"type": "input_file", "file_data": "data:,x", "filename": "a.txt"},
                ],
            }
        ),
        item({"type": "reasoning", "summary": [{"type": "summary_text", "text": "hmm"}]}),
        item({"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}),
        item({"type": "function_call_output", "call_id": "c1", "output": "42"}),
        item(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "refusal", "refusal": "no"}],
            }
        ),
        compaction(None),
    ]

    assert transcript(items, COMPACTIONS.read).split("\n\n") == [
        "USER: look [image] [file a.txt]",
        "ASSISTANT (thinking): hmm",
        "TOOL CALL f (c1): {}",
        "TOOL RESULT (c1): 42",
        "ASSISTANT: (refused: no)",
        "EARLIER SUMMARY: summary",
    ]


async def test_an_empty_summary_is_an_upstream_failure() -> None:
    model = ScriptedModel(["   "])

    with pytest.raises(UpstreamError, match="empty summary"):
        await COMPACTIONS.summarize(model, "scripted", [user("u1")])


def test_a_foreign_item_names_where_it_was_given() -> None:
    foreign = Compactions(Sealer([SealingKey.new()])).item(Summary("x", None))

    with pytest.raises(InvalidRequestError) as caught:
        COMPACTIONS.read(foreign, param="input[3]")

    assert caught.value.param == "input[3].encrypted_content"
    assert caught.value.code == "invalid_encrypted_content"
