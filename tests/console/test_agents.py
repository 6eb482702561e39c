"""Managed agents in Chromium: one made through the API is listed and opened, and a message sent
from its page streams the reply in the agent's own format (a tool call with its result, text);
one made with the form, edited, given a queued message, run and followed live, then deleted."""

from __future__ import annotations

from typing import Any

import httpx2
from playwright.sync_api import expect

from agentloom.inference.scripted import ScriptedModel, delay, text, tool_call
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


def test_an_agent_made_with_the_form_runs_its_queued_message_live_and_is_deleted(
    page: Any, origin: str, scripted: ScriptedModel, backend: FakeBackend, shoot: Any
) -> None:
    page.goto(f"{origin}/console/#/agents")
    page.get_by_text("New agent").click()
    form = page.get_by_role("form", name="Create agent")
    form.get_by_label("Name").fill("helper")
    form.get_by_label("Agent type").fill("orchestrator")
    form.get_by_label("Model").select_option(backend.model)
    form.get_by_label("Instructions").fill("Be brief.")
    form.get_by_label("calculator").check()
    shoot("agent-create")
    form.get_by_role("button", name="Create agent").click()
    expect(page.get_by_role("heading", name="helper")).to_be_visible()
    config = page.locator("pre").filter(has_text='"tools"')
    expect(config).to_contain_text("calculator")

    page.get_by_text("Edit", exact=True).click()
    page.get_by_role("form", name="Save changes").get_by_label("Max turns").fill("5")
    page.get_by_role("button", name="Save changes").click()
    expect(page.locator("pre").filter(has_text='"tools"')).to_contain_text('"max_turns": 5')

    page.get_by_label("Message", exact=True).fill("What is 17 * 23?")
    page.get_by_role("button", name="Queue for the next run").click()
    messages = page.locator(".messages")
    expect(messages.locator("tbody tr").first).to_contain_text("pending")

    scripted.add_turn(tool_call("calculator", {"expression": "17 * 23"}, "call_1"))
    scripted.add_turn(text("17 * 23 = 391.", chunk_size=4))
    page.get_by_role("button", name="Run now").click()
    run = page.locator(".run")
    expect(run).to_have_attribute("data-status", "completed")
    expect(run.locator("[data-call=call_1]").get_by_label("result")).to_have_text("391")
    expect(run.locator(".reply")).to_have_text("17 * 23 = 391.")
    expect(messages.locator("tbody tr").first).to_contain_text("17 * 23 = 391.")
    expect(page.locator(".runs tbody tr")).to_contain_text("completed")
    shoot("agent-run")

    delete = page.get_by_role("button", name="Delete agent")
    delete.click()
    page.get_by_role("button", name="Confirm delete").click()
    expect(page.get_by_text("No managed agents.")).to_be_visible()
    assert httpx2.get(f"{origin}/v1/managed-agents").json()["data"] == []


def test_a_run_followed_live_is_cancelled(
    page: Any, origin: str, scripted: ScriptedModel, backend: FakeBackend
) -> None:
    agent = httpx2.post(
        f"{origin}/v1/managed-agents",
        json={"name": "slow", "agent_type": "simple", "config": {"model": backend.model}},
    ).json()
    scripted.add_turn("Working on it", delay(10), " - never said.")
    page.goto(f"{origin}/console/#/agents/{agent['id']}")

    page.get_by_role("button", name="Run now").click()
    run = page.locator(".run")
    expect(run.locator(".reply")).to_have_text("Working on it")
    page.get_by_role("button", name="Cancel run").click()

    expect(run).to_have_attribute("data-status", "cancelled")
    expect(run.locator(".reply")).to_have_text("Working on it")
    expect(page.get_by_role("button", name="Cancel run")).to_be_hidden()
    runs = httpx2.get(f"{origin}/v1/managed-agents/{agent['id']}/runs").json()["data"]
    assert [r["status"] for r in runs] == ["cancelled"]
