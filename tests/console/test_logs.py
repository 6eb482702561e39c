"""The Logs page's filters in Chromium: status, a time range and metadata pairs are sent to the
server (``GET /v1/responses``), which answers with the matches only."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import httpx2
from playwright.sync_api import expect

from agentloom.errors import UpstreamError
from agentloom.inference.scripted import ScriptedModel, raise_error
from agentloom.testing.backend import FakeBackend


def create(origin: str, model: str, metadata: dict[str, str]) -> httpx2.Response:
    body = {"model": model, "input": "Hi", "metadata": metadata}
    return httpx2.post(f"{origin}/v1/responses", json=body, timeout=10)


def minute(when: datetime) -> str:
    """A ``datetime-local`` input's value (local time, to the minute)."""
    return when.strftime("%Y-%m-%dT%H:%M")


def test_the_logs_filter_on_the_server(
    page: Any, origin: str, scripted: ScriptedModel, backend: FakeBackend, shoot: Any
) -> None:
    ids = [create(origin, backend.model, {"team": t, "env": "prod"}).json()["id"] for t in "aba"]
    scripted.add_turn(raise_error(UpstreamError("model crashed", status=500)))
    assert create(origin, backend.model, {"team": "a"}).status_code == 502
    page.goto(f"{origin}/console/#/logs")
    rows = page.locator(".results tbody tr")
    expect(rows).to_have_count(4)

    page.get_by_label("Status").select_option("failed")
    with page.expect_request(lambda r: "status=failed" in r.url):
        page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    expect(rows.locator(".badge")).to_have_text("failed")

    page.get_by_label("Status").select_option("")
    page.get_by_label("Metadata key").fill("team")
    page.get_by_label("Metadata value").fill("a")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(3)
    page.get_by_role("button", name="+ metadata pair").click()
    page.get_by_label("Metadata key").nth(1).fill("env")
    page.get_by_label("Metadata value").nth(1).fill("prod")
    page.get_by_label("Status").select_option("completed")
    with page.expect_request(lambda r: "metadata%5Benv%5D=prod" in r.url):
        page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text(ids[2])  # newest first
    expect(rows.nth(1)).to_contain_text(ids[0])

    now = datetime.now()
    page.get_by_label("Created from").fill(minute(now + timedelta(minutes=2)))
    page.get_by_role("button", name="Filter").click()
    expect(page.locator(".results")).to_contain_text("No stored responses match")
    page.get_by_label("Created from").fill(minute(now - timedelta(minutes=2)))
    page.get_by_label("Created before").fill(minute(now + timedelta(minutes=2)))
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(2)
    shoot("logs-filtered")
