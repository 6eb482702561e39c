"""Agent sessions in SQLite: history (every message field), state merges, tick records, and
two stores (as two processes would) sharing one file."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from agentloom.agents.saved_history import (
    history_from_json,
    history_to_json,
    message_from_json,
    message_to_json,
    trim_history,
)
from agentloom.agents.sessions import SessionDataError, SessionStore
from agentloom.llm.types import Message, MessageToolCall, ReasoningItem

REASONING = ReasoningItem(
    id="rs_1",
    summary=("thought about it",),
    encrypted_content="gAAAA-secret",
    item={"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA-secret"},
)
HISTORY = (
    Message.user("What is 6 x 7?"),
    Message(
        "assistant",
        None,
        (MessageToolCall("call_1", "calculator", '{"expression": "6*7"}'),),
        reasoning="multiply",
        reasoning_items=(REASONING,),
    ),
    Message.tool("call_1", "42", name="calculator"),
    Message.assistant("It is 42."),
)


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore.in_dir(tmp_path / "data")


def test_every_message_field_survives_json() -> None:
    back = history_from_json(history_to_json(HISTORY))

    assert back == HISTORY
    assert back[1].reasoning_items[0].item == REASONING.item  # not part of equality
    assert back[1].reasoning_items[0].encrypted_content == "gAAAA-secret"
    assert message_to_json(Message.user("hi")) == {"role": "user", "content": "hi"}


@pytest.mark.parametrize(
    "data",
    [{"role": "robot", "content": "x"}, {"role": "user", "surprise": 1}, ["user"], None],
)
def test_what_is_not_a_message_is_refused(data: object) -> None:
    with pytest.raises(SessionDataError, match="not valid"):
        message_from_json(data)  # type: ignore[arg-type]


def test_a_history_that_is_not_json_is_refused() -> None:
    with pytest.raises(SessionDataError, match="not JSON"):
        history_from_json("[{")
    with pytest.raises(SessionDataError, match="not a JSON array"):
        history_from_json("{}")


async def test_an_unknown_session_is_empty(store: SessionStore) -> None:
    saved = await store.load("operative", "nobody")

    assert saved.history == ()
    assert saved.state == {}
    assert saved.updated_at is None


async def test_history_and_state_are_saved_apart(store: SessionStore) -> None:
    await store.update_state("operative", "s1", {"colour": "teal", "count": 1})
    await store.save_history("operative", "s1", HISTORY)
    state = await store.update_state("operative", "s1", {"count": 2, "colour": None})

    saved = await store.load("operative", "s1")
    assert saved.history == HISTORY
    assert saved.state == state == {"count": 2}
    assert saved.updated_at is not None
    assert (await store.load("other-agent", "s1")).history == ()
    await store.save_state("operative", "s1", {"fresh": [1, 2]})
    assert (await store.load("operative", "s1")).state == {"fresh": [1, 2]}
    assert (await store.load("operative", "s1")).history == HISTORY


async def test_the_file_is_in_wal_mode(store: SessionStore) -> None:
    await store.load("operative", "s1")

    with sqlite3.connect(store.path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


async def test_two_stores_on_one_file_see_each_other(tmp_path: Path) -> None:
    first, second = SessionStore.in_dir(tmp_path), SessionStore.in_dir(tmp_path)

    await first.save_history("operative", "shared", HISTORY[:1])
    assert (await second.load("operative", "shared")).history == HISTORY[:1]
    await second.save_history("operative", "shared", HISTORY)
    assert (await first.load("operative", "shared")).history == HISTORY


async def test_state_merges_from_two_stores_at_once_lose_nothing(tmp_path: Path) -> None:
    stores = (SessionStore.in_dir(tmp_path), SessionStore.in_dir(tmp_path))

    await asyncio.gather(
        *(stores[n % 2].update_state("operative", "busy", {f"key{n}": n}) for n in range(24))
    )

    state = (await stores[0].load("operative", "busy")).state
    assert state == {f"key{n}": n for n in range(24)}


async def test_ticks_are_numbered_per_session_and_finished(store: SessionStore) -> None:
    first = await store.start_tick("operative", "s1")
    await store.start_tick("operative", "s2")
    done = await store.finish_tick(first.id, "ok", "all good")
    second = await store.start_tick("operative", "s1")

    assert (first.number, second.number) == (1, 2)
    assert (first.status, first.finished_at) == ("running", None)
    assert (done.status, done.summary) == ("ok", "all good")
    assert done.finished_at is not None
    assert done.finished_at >= done.started_at
    listed = await store.ticks("operative", "s1")
    assert [(t.number, t.status) for t in listed] == [(1, "ok"), (2, "running")]
    assert [t.number for t in await store.ticks("operative", "s1", limit=1)] == [2]


async def test_a_deleted_session_is_gone_with_its_ticks(store: SessionStore) -> None:
    await store.save_history("operative", "s1", HISTORY)
    await store.start_tick("operative", "s1")
    await store.save_history("operative", "s2", HISTORY)

    assert await store.delete("operative", "s1")
    assert not await store.delete("operative", "s1")
    assert (await store.load("operative", "s1")).history == ()
    assert await store.ticks("operative", "s1") == []
    assert await store.sessions("operative") == ["s2"]


def _calls(call_id: str) -> Message:
    return Message.assistant(None, (MessageToolCall(call_id, "f"),))


def test_trimming_starts_at_a_turn() -> None:
    history = [*HISTORY, Message.user("And 7 x 8?"), Message.assistant("56.")]

    assert trim_history(history, 10) == history
    assert trim_history(history, 3) == history[4:]  # the newest turn
    assert trim_history(history, 5) == history[4:]  # a turn's start, not its tool result


def test_trimming_keeps_tool_call_groups_whole() -> None:
    history = [
        Message.user("go"),
        _calls("a"),
        Message.tool("a", "1"),
        _calls("b"),
        Message.tool("b", "2"),
        Message.assistant("done"),
    ]

    assert trim_history(history, 4) == history[3:]  # no user message in reach: a whole group
    assert trim_history(history, 1) == history[5:]
    only_results = [Message.user("go"), _calls("a"), Message.tool("a", "1"), Message.tool("a", "2")]
    assert trim_history(only_results, 1) == only_results[1:]
    with pytest.raises(ValueError, match="at least 1"):
        trim_history(history, 0)
