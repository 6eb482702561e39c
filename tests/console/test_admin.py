"""Keys on, in Chromium: sign in (the key kept in session storage, never in the URL), the admin
page makes a project and keys (each shown once) and revokes one; a project key sees no admin."""

from __future__ import annotations

import re
from typing import Any

import httpx2
from playwright.sync_api import expect

from agentloom.inference.scripted import ScriptedModel
from tests.plugins.tenants import ADMIN


def sign_in(page: Any, key: str) -> None:
    page.get_by_label("API key", exact=True).fill(key)
    page.get_by_role("button", name="Sign in").click()


def create_key(page: Any, name: str) -> str:
    page.get_by_label("New key (a service account's)").fill(name)
    page.get_by_role("button", name="Create key").click()
    box = page.locator(".new-key")
    expect(box).to_contain_text(f"New key of “{name}”")
    value: str = box.locator("code.secret").inner_text()
    return value


def test_sign_in_create_and_revoke_keys(
    page: Any, keyed_origin: str, scripted: ScriptedModel, shoot: Any
) -> None:
    page.goto(f"{keyed_origin}/console/")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    shoot("sign-in")
    sign_in(page, "sk-not-a-key")
    expect(page.get_by_role("alert")).to_contain_text("Incorrect API key")
    sign_in(page, ADMIN)
    expect(page.get_by_role("link", name="Admin")).to_be_visible()
    assert ADMIN not in page.url
    page.get_by_role("link", name="Admin").click()
    page.get_by_label("New project").fill("alpha")
    page.get_by_role("button", name="Create project").click()
    expect(page.get_by_role("heading", name="API keys of alpha")).to_be_visible()

    kept = create_key(page, "ci")
    gone = create_key(page, "old")
    assert kept.startswith("sk-")
    assert gone.startswith("sk-")
    assert kept != gone
    assert kept not in page.content()  # the first key's value is no longer shown
    keys = page.locator("section").filter(has_text="API keys of").locator("tbody tr")
    expect(keys).to_have_count(2)
    shoot("admin")
    revoke = keys.filter(has_text="old").get_by_role("button", name="Revoke")
    revoke.click()
    keys.filter(has_text="old").get_by_role("button", name="Confirm revoke").click()
    expect(keys).to_have_count(1)
    expect(keys).to_contain_text("ci")
    page.reload()
    expect(keys).to_have_count(1)
    expect(page.locator(".new-key")).to_have_count(0)  # shown once: not after a reload
    base = f"{keyed_origin}/v1/models"
    assert httpx2.get(base, headers={"authorization": f"Bearer {gone}"}).status_code == 401
    assert httpx2.get(base, headers={"authorization": f"Bearer {kept}"}).status_code == 200

    page.get_by_role("button", name="Sign out").click()
    sign_in(page, kept)
    expect(page.get_by_role("heading", name="Playground")).to_be_visible()
    expect(page.get_by_role("link", name="Admin")).to_have_count(0)
    stored = page.evaluate("() => Object.values(sessionStorage)")
    assert stored == [kept]
    scripted.add_turn("Hello, alpha.")
    page.get_by_label("Input").fill("Hi")
    page.get_by_role("button", name="Send").click()
    expect(page.locator(".turn")).to_have_attribute("data-status", "completed")
    expect(page.locator(".turn [data-type=message]")).to_contain_text("Hello, alpha.")

    page.get_by_role("button", name="Sign out").click()
    sign_in(page, ADMIN)
    page.get_by_role("link", name="Admin").click()
    usage = page.locator("section").filter(has_text="Token usage")
    for _ in range(20):  # the usage ledger is written every 0.1 s here
        if usage.locator("tbody tr").count():
            break
        page.wait_for_timeout(200)
        page.reload()
    expect(usage.locator("tbody tr")).to_contain_text("alpha")
    expect(usage.locator("tbody tr")).to_contain_text("fake-model")
    expect(usage.locator("svg.chart rect")).not_to_have_count(0)
    shoot("admin-usage")


def test_a_refused_key_returns_to_sign_in(page: Any, keyed_origin: str) -> None:
    page.goto(f"{keyed_origin}/console/")
    sign_in(page, ADMIN)
    expect(page.get_by_role("link", name="Admin")).to_be_visible()
    page.evaluate("() => sessionStorage.setItem('agentloom.console.key', 'sk-revoked-meanwhile')")
    page.get_by_role("link", name="Admin").click()

    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text("refused the key")


def test_rate_limits_edited_and_the_audit_log(page: Any, keyed_origin: str, shoot: Any) -> None:
    org = f"{keyed_origin}/v1/organization"
    admin = {"authorization": f"Bearer {ADMIN}"}
    project = httpx2.post(f"{org}/projects", json={"name": "limited"}, headers=admin).json()
    page.goto(f"{keyed_origin}/console/")
    sign_in(page, ADMIN)
    page.goto(f"{keyed_origin}/console/#/admin/{project['id']}")

    limits = page.locator("section").filter(has_text="Rate limits")
    row = limits.locator("tbody tr").filter(has_text="fake-model")
    expect(row.get_by_label("Requests / minute of fake-model")).to_have_value("0")
    row.get_by_label("Requests / minute of fake-model").fill("7")
    row.get_by_label("Requests / day of fake-model").fill("900")
    row.get_by_role("button", name="Save fake-model").click()
    expect(row.get_by_role("status")).to_have_text("Saved")

    listed = httpx2.get(f"{org}/projects/{project['id']}/rate_limits", headers=admin).json()
    limit = next(r for r in listed["data"] if r["model"] == "fake-model")
    assert (limit["max_requests_per_1_minute"], limit["max_requests_per_1_day"]) == (7, 900)
    assert limit["max_tokens_per_1_minute"] == 0
    page.reload()
    expect(row.get_by_label("Requests / minute of fake-model")).to_have_value("7")
    events = page.locator("section").filter(has_text="Recent events in this project")
    expect(events.locator("tbody tr").first).to_contain_text("rate_limit.updated")
    expect(events.locator("tbody tr").first).to_contain_text(
        '{"changes_requested":{"max_requests_per_1_minute":7,"max_requests_per_1_day":900}}'
    )
    expect(events.locator("tbody tr").last).to_contain_text("project.created")
    shoot("admin-limits")


def test_the_project_picker_switches_the_project_worked_in(
    page: Any, keyed_origin: str, scripted: ScriptedModel
) -> None:
    v1 = f"{keyed_origin}/v1"
    admin = {"authorization": f"Bearer {ADMIN}"}
    made: dict[str, str] = {}
    for name in ("north", "south"):
        project = httpx2.post(f"{v1}/organization/projects", json={"name": name}, headers=admin)
        scripted.add_turn(f"Hello from {name}.")
        body = {"model": "fake-model", "input": "Hi", "metadata": {"from": name}}
        reply = httpx2.post(
            f"{v1}/responses", json=body, headers=admin | {"openai-project": project.json()["id"]}
        )
        assert reply.status_code == 200, reply.text
        made[name] = reply.json()["id"]
    page.goto(f"{keyed_origin}/console/#/logs")
    sign_in(page, ADMIN)
    expect(page.locator(".notice")).to_contain_text("pick one above")

    picker = page.get_by_label("Project", exact=True)
    rows = page.locator(".results tbody tr")
    for name, other in (("north", "south"), ("south", "north")):
        picker.select_option(
            label=next(o for o in picker.locator("option").all_inner_texts() if o.startswith(name))
        )
        expect(rows).to_have_count(1)
        expect(rows).to_contain_text(made[name])
        expect(rows).to_contain_text(f"Hello from {name}.")
        expect(page.locator(".results")).not_to_contain_text(made[other])
    page.reload()  # the choice is kept for the tab
    expect(picker).to_have_value(re.compile("^proj_"))
    expect(rows).to_contain_text(made["south"])
