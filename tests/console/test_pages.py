"""The read-mostly pages in Chromium: conversations (opened by id, a compaction drawn as a
marker), containers and managed agents draw what the API holds, or say there is nothing,
without a script error."""

from __future__ import annotations

from typing import Any

import httpx2
from playwright.sync_api import expect

from agentloom.inference.scripted import ScriptedModel
from agentloom.testing.backend import FakeBackend


def test_a_conversation_opened_by_id_shows_its_items(page: Any, origin: str, shoot: Any) -> None:
    made = httpx2.post(
        f"{origin}/v1/conversations",
        json={
            "metadata": {"topic": "tides"},
            "items": [
                {"type": "message", "role": "user", "content": "When is high tide?"},
                {"type": "message", "role": "assistant", "content": "At 14:05."},
            ],
        },
    ).json()
    page.goto(f"{origin}/console/#/conversations")
    page.get_by_label("Conversation id").fill(made["id"])
    page.get_by_role("button", name="Open").click()

    expect(page.locator(".facts")).to_contain_text("2")
    expect(page.locator(".facts")).to_contain_text('"topic": "tides"')
    messages = page.locator("[data-type=message]")
    expect(messages).to_have_count(2)
    expect(messages.nth(0)).to_contain_text("When is high tide?")
    expect(messages.nth(1)).to_contain_text("At 14:05.")
    shoot("conversation")


def test_a_compaction_in_a_conversation_is_a_marker(
    page: Any, origin: str, scripted: ScriptedModel, backend: FakeBackend, shoot: Any
) -> None:
    conversation = httpx2.post(f"{origin}/v1/conversations", json={}).json()["id"]
    scripted.add_turns("A very long first answer. " * 20, "First turn summary.", "second answer")
    turn = {"model": backend.model, "conversation": conversation, "input": "one"}
    assert httpx2.post(f"{origin}/v1/responses", json=turn, timeout=10).status_code == 200
    compacting = [{"type": "compaction", "compact_threshold": 30}]
    turn |= {"input": "two", "context_management": compacting}
    assert httpx2.post(f"{origin}/v1/responses", json=turn, timeout=10).status_code == 200
    items = httpx2.get(f"{origin}/v1/conversations/{conversation}/items?order=asc").json()["data"]
    compaction = next(i for i in items if i["type"] == "compaction")

    page.goto(f"{origin}/console/#/conversations/{conversation}")
    marker = page.locator("[data-type=compaction]")
    expect(marker).to_have_text(f"earlier turns compacted · {compaction['id']}")
    assert compaction["encrypted_content"][:16] not in page.locator("main").inner_text()
    expect(page.locator(".facts")).to_contain_text("(1 compaction marker)")
    expect(page.locator("[data-type=message]")).to_have_count(len(items) - 1)
    shoot("conversation-compaction")


def test_the_lists_say_when_they_are_empty(page: Any, origin: str, shoot: Any) -> None:
    for name, empty in [
        ("containers", "No containers yet"),
        ("agents", "No managed agents"),
        ("logs", "No stored responses match"),
        ("files", "No files yet"),
        ("vector-stores", "No vector stores yet"),
    ]:
        page.goto(f"{origin}/console/#/{name}")
        expect(page.locator("main")).to_contain_text(empty)
        if name in ("containers", "agents"):
            shoot(name)
    expect(page.get_by_role("link", name="Admin")).to_have_count(0)  # keys off: no admin page
