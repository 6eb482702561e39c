"""Managed agents in Chromium: one made through the API is listed and opened, and a message sent
from its page streams the reply in the agent's own format (a tool call with its result, text)."""

from __future__ import annotations

from typing import Any

import httpx2
from playwright.sync_api import expect

from agentloom.inference.scripted import ScriptedModel, text, tool_call
from agentloom.testing.backend import FakeBackend


def test_an_agent_made_by_the_api_answers_a_streamed_message(
    page: Any, origin: str, scripted: ScriptedModel, backend: FakeBackend, shoot: Any
) -> None:
    config = {"model": backend.model, "tools": ["calculator"], "instructions": "Be brief."}
    agent = httpx2.post(
        f"{origin}/v1/managed-agents",
        json={"name": "sums", "agent_type": "orchestrator", "config": config},
    ).json()
    page.goto(f"{origin}/console/#/agents")
    row = page.locator("table tbody tr").filter(has_text="sums")
    expect(row).to_contain_text("orchestrator")
    shoot("agents")
    row.get_by_role("link", name=agent["id"]).click()
    expect(page.get_by_role("heading", name="sums")).to_be_visible()
    expect(page.locator("pre").filter(has_text='"tools"')).to_contain_text("calculator")

    scripted.add_turn(tool_call("calculator", {"expression": "17 * 23"}, "call_1"))
    scripted.add_turn(text("17 * 23 = 391.", chunk_size=4))
    page.get_by_label("Message", exact=True).fill("What is 17 * 23?")
    page.get_by_role("button", name="Send").click()

    form = page.locator("form").filter(has=page.get_by_label("Message", exact=True))
    expect(form).to_have_attribute("data-status", "done")
    call = form.locator("[data-call=call_1]")
    expect(call).to_contain_text("calculator")
    expect(call.get_by_label("result")).to_have_text("391")
    expect(form.locator(".reply")).to_have_text("17 * 23 = 391.")
    expect(form).to_contain_text("tokens")
    stored = httpx2.get(f"{origin}/v1/managed-agents/{agent['id']}/messages").json()["data"]
    assert [m["content"] for m in stored][-2:] in (
        ["What is 17 * 23?", "17 * 23 = 391."],
        ["17 * 23 = 391.", "What is 17 * 23?"],
    )
    shoot("agent")
