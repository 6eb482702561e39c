"""Server tools in the playground, in Chromium: a file_search turn drawn with its call (queries,
hits) and the answer's citations; a code_interpreter turn (the real bubblewrap sandbox) whose
container then shows the file it wrote on the Containers page."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx2
import pytest
from playwright.sync_api import expect

from agentloom.inference.scripted import ScriptedModel, tool_call

HANDBOOK = (
    "The kettle's heating element is covered by a five year warranty.\n\n"
    "Descale the kettle every month with white vinegar.\n"
)


def ready_store(origin: str) -> str:
    """A vector store holding handbook.md, once its ingestion is done."""
    v1 = f"{origin}/v1"
    uploaded = httpx2.post(
        f"{v1}/files",
        files={"file": ("handbook.md", HANDBOOK.encode())},
        data={"purpose": "assistants"},
    ).json()
    store = httpx2.post(
        f"{v1}/vector_stores", json={"name": "handbook", "file_ids": [uploaded["id"]]}
    ).json()
    for _ in range(100):
        counts = httpx2.get(f"{v1}/vector_stores/{store['id']}").json()["file_counts"]
        if counts["completed"] == 1:
            return str(store["id"])
        time.sleep(0.05)
    raise AssertionError(f"the store's file was not ingested: {counts}")


def test_a_file_search_turn_with_its_call_and_citations(
    page: Any, origin: str, scripted: ScriptedModel, shoot: Any
) -> None:
    store = ready_store(origin)
    scripted.add_turn(tool_call("file_search", {"queries": ["kettle warranty"]}))
    scripted.add_turn("The heating element is covered for five years [1].")
    page.goto(f"{origin}/console/")
    page.get_by_label("file_search").check()
    page.get_by_label("Vector stores").select_option(store)
    page.get_by_label("Input").fill("How long is the kettle's warranty?")
    page.get_by_role("button", name="Send").click()

    turn = page.locator(".turn")
    expect(turn).to_have_attribute("data-status", "completed")
    call = turn.locator("[data-type=file_search_call]")
    expect(call).to_contain_text("queries: kettle warranty")
    expect(call.locator(".hits li").first).to_contain_text("handbook.md")
    expect(call.locator(".hits li").first).to_contain_text("five year warranty")
    message = turn.locator("[data-type=message]")
    expect(message).to_contain_text("covered for five years [1]")
    expect(message.get_by_role("list", name="Citations")).to_contain_text("handbook.md (file-")
    shoot("playground-file-search")


@pytest.mark.usefixtures("requires_sandbox")
def test_a_code_interpreter_turn_and_its_containers_file(
    page: Any, origin: str, scripted: ScriptedModel, shoot: Any
) -> None:
    code = "open('tides.txt', 'w').write('high tide at 14:05')\nprint('saved')"
    scripted.add_turn(tool_call("code_interpreter", {"code": code}))
    scripted.add_turn("Saved tides.txt.")
    page.goto(f"{origin}/console/")
    page.get_by_label("code_interpreter").check()
    page.get_by_label("Input").fill("Write the tide times to a file")
    page.get_by_role("button", name="Send").click()

    turn = page.locator(".turn")
    expect(turn).to_have_attribute("data-status", "completed")
    call = turn.locator("[data-type=code_interpreter_call]")
    expect(call.get_by_label("code")).to_contain_text("open('tides.txt', 'w')")
    expect(call.get_by_label("output")).to_have_text("saved")
    expect(turn.locator("[data-type=message]")).to_contain_text("Saved tides.txt.")

    page.get_by_role("link", name="Containers").click()
    page.locator("table tbody tr a").first.click()
    files = page.locator("table tbody tr")
    expect(files.filter(has_text="tides.txt")).to_have_count(1)
    with page.expect_download() as download:
        files.filter(has_text="tides.txt").get_by_role("button", name="Download").click()
    assert download.value.suggested_filename == "tides.txt"
    assert Path(download.value.path()).read_text(encoding="utf-8") == "high tide at 14:05"
    shoot("container")
