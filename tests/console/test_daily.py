"""The console as a daily tool, in Chromium against a real server (the fake backend, keys off):
the composer in sight in a small window, a reply drawn as Markdown (a highlighted code block
that copies, no markup from the model), the models offered, a refused request's badge, the
conversations listed, an unknown address, and usage without keys."""

from __future__ import annotations

import re
from typing import Any

import httpx2
import pytest
from playwright.sync_api import expect

from agentloom.config import Settings
from agentloom.inference.scripted import ScriptedModel, text
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import FAKE_EMBEDDING_MODEL

REPLY = """## Plan

Use **bold** steps, *gently*, with `inline code` and a [link](https://example.com/docs):

1. first
2. second

| tool | ok |
|:-----|---:|
| grep | yes |

```python
def twice(n):
    return n * 2  # doubled
```

<img src=x onerror="document.title='pwned'"> and [bad](javascript:alert(1))
"""
CODE = "def twice(n):\n    return n * 2  # doubled"


@pytest.fixture
def console_settings(console_settings: Settings) -> Settings:
    """The conftest's, the usage ledger written every 0.1 s (the usage page's test waits)."""
    server = console_settings.server.model_copy(update={"usage_flush_interval": 0.1})
    return console_settings.model_copy(update={"server": server})


def in_view(page: Any, locator: Any) -> bool:
    box = locator.bounding_box()
    size = page.viewport_size
    return bool(box) and box["y"] >= 0 and box["y"] + box["height"] <= size["height"]


def send(page: Any, words: str) -> Any:
    """Send ``words`` from the composer; the turn it adds."""
    page.get_by_label("Input").fill(words)
    page.get_by_role("button", name="Send").click()
    return page.locator(".turn").last


def test_send_is_in_sight_in_a_small_window_before_and_after_a_long_reply(
    page: Any, origin: str, scripted: ScriptedModel, shoot: Any
) -> None:
    page.set_viewport_size({"width": 900, "height": 700})
    scripted.add_turn("\n\n".join(f"Paragraph {n} of a long answer." for n in range(40)))
    page.goto(f"{origin}/console/")
    send_button = page.get_by_role("button", name="Send")
    expect(send_button).to_be_visible()

    assert in_view(page, send_button)  # no scrolling: the composer is under the conversation
    settings = page.get_by_role("form", name="Settings")
    chat = page.locator(".chat").bounding_box()
    assert settings.bounding_box()["x"] >= chat["x"] + chat["width"]  # beside it
    turn = send(page, "Tell me a lot.")
    expect(turn).to_have_attribute("data-status", "completed")
    assert in_view(page, send_button)  # kept at the window's foot
    assert in_view(page, page.get_by_label("Input"))
    shoot("playground-small-window")


def test_a_reply_is_drawn_as_markdown_with_a_code_block_that_copies(
    page: Any, origin: str, scripted: ScriptedModel, shoot: Any
) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=origin)
    scripted.add_turn(text(REPLY, chunk_size=7))
    page.goto(f"{origin}/console/")

    turn = send(page, "Plan it.")
    expect(turn).to_have_attribute("data-status", "completed")
    prose = turn.locator("[data-type=message] .markdown")
    expect(prose.get_by_role("heading", name="Plan")).to_be_visible()
    expect(prose.locator("strong")).to_have_text("bold")
    expect(prose.locator("em")).to_have_text("gently")
    expect(prose.locator("p code")).to_have_text("inline code")
    expect(prose.get_by_role("link", name="link")).to_have_attribute(
        "href", "https://example.com/docs"
    )
    expect(prose.locator("ol li")).to_have_text(["first", "second"])
    expect(prose.locator("table td.align-right")).to_have_text("yes")
    block = prose.locator(".codeblock")
    expect(block.locator("code")).to_have_text(CODE)
    expect(block.locator(".tok-keyword")).to_have_text(["def", "return"])
    expect(block.locator(".tok-comment")).to_have_text("# doubled")
    expect(block.locator(".tok-number")).to_have_text("2")
    # the model's markup is text: no image, no script ran, no javascript: link
    expect(prose.locator("img")).to_have_count(0)
    expect(prose).to_contain_text("<img src=x onerror=\"document.title='pwned'\">")
    expect(prose.get_by_role("link", name="bad")).to_have_count(0)
    assert page.title() != "pwned"

    block.get_by_role("button", name="Copy python").click()
    expect(block.get_by_role("button", name="Copy python")).to_have_text("Copied")
    assert page.evaluate("() => navigator.clipboard.readText()") == CODE
    shoot("playground-markdown")


def test_the_model_list_offers_each_chat_model_once(
    page: Any, origin: str, backend: FakeBackend
) -> None:
    listed = [m["id"] for m in httpx2.get(f"{origin}/v1/models").json()["data"]]
    assert FAKE_EMBEDDING_MODEL in listed  # what is left out: an embeddings model

    page.goto(f"{origin}/console/")
    offered = page.get_by_label("Model").locator("option")
    expect(offered).to_have_text([backend.model])
    page.goto(f"{origin}/console/#/agents")
    page.get_by_text("New agent").click()
    agent_models = page.get_by_role("form", name="Create agent").get_by_label("Model")
    expect(agent_models.locator("option")).to_have_text(["(the server's default)", backend.model])


def test_a_refused_request_is_failed_not_sending(page: Any, origin: str) -> None:
    page.goto(f"{origin}/console/")
    page.get_by_role("textbox", name="Conversation").fill("conv_missing")

    turn = send(page, "Hello?")

    expect(turn).to_have_attribute("data-status", "failed")
    expect(turn.locator(".turn-status .badge")).to_have_text("failed")
    expect(turn.get_by_role("alert")).to_contain_text("conv_missing")
    send(page, "Still there?")  # the playground is not left busy
    expect(page.locator(".turn")).to_have_count(2)


def test_conversations_are_listed_newest_first_and_open(page: Any, origin: str, shoot: Any) -> None:
    made = [
        httpx2.post(f"{origin}/v1/conversations", json={"metadata": {"n": str(n)}}).json()["id"]
        for n in range(3)
    ]
    page.goto(f"{origin}/console/#/conversations")

    rows = page.locator("table tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.nth(0)).to_contain_text(made[2])
    expect(rows.nth(0)).to_contain_text("n: 2")
    expect(rows.nth(2)).to_contain_text(made[0])
    expect(page.get_by_role("button", name="Older →")).to_be_disabled()
    shoot("conversations")
    page.get_by_role("link", name=made[1]).click()
    expect(page.get_by_role("heading", name=made[1])).to_be_visible()
    expect(page.locator(".facts")).to_contain_text('"n": "1"')
    page.get_by_role("link", name="← Conversations").click()
    expect(rows).to_have_count(3)


def test_an_unknown_address_is_a_not_found_page(page: Any, origin: str, shoot: Any) -> None:
    for address in ("#/nowhere", "#/nowhere/at/all", "#/constructor"):
        page.goto(f"{origin}/console/{address}")
        expect(page.get_by_role("heading", name="Page not found")).to_be_visible()
        expect(page.locator("main")).to_contain_text(address)
        expect(page.get_by_role("button", name="Send")).to_have_count(0)
        expect(page.locator("nav a[aria-current=page]")).to_have_count(0)
    expect(page.locator("main").get_by_role("link", name="Playground")).to_be_visible()
    shoot("not-found")
    for address in ("#/", "#/admin"):  # no page named, or one that keys off do not show
        page.goto(f"{origin}/console/{address}")
        expect(page.get_by_role("button", name="Send")).to_be_visible()


def test_usage_is_shown_without_keys(
    page: Any, origin: str, scripted: ScriptedModel, backend: FakeBackend, shoot: Any
) -> None:
    scripted.add_turn("Counted.")
    page.goto(f"{origin}/console/")
    expect(send(page, "Count me.")).to_have_attribute("data-status", "completed")

    page.get_by_role("link", name="Usage").click()
    usage = page.locator("section.usage")
    for _ in range(20):  # the usage ledger is written every 0.1 s here
        if usage.locator("tbody tr").count():
            break
        page.wait_for_timeout(200)
        page.reload()
    row = usage.locator("tbody tr")
    expect(row).to_have_count(1)
    expect(row).to_contain_text(re.compile("Default project|proj_default"))
    expect(row).to_contain_text(backend.model)
    expect(usage.locator("svg.chart rect")).not_to_have_count(0)
    expect(page.get_by_role("link", name="Admin")).to_have_count(0)
    shoot("usage")
