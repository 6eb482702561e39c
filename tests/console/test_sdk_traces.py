"""A response's page in Chromium shows the Agents SDK's trace of it (what the SDK's exporter
sent to ``/v1/traces/ingest``) beside the server's own timeline; a response without one shows
only the server's."""

from __future__ import annotations

from typing import Any

import httpx2
from playwright.sync_api import expect

from agentloom.testing.backend import FakeBackend


def _span(span_id: str, parent: str | None, start: str, end: str, data: dict[str, Any]) -> Any:
    return {
        "object": "trace.span",
        "id": span_id,
        "trace_id": "trace_sdk1",
        "parent_id": parent,
        "started_at": f"2026-01-01T00:00:{start}+00:00",
        "ended_at": f"2026-01-01T00:00:{end}+00:00",
        "span_data": data,
        "error": None,
    }


def test_the_sdk_trace_is_drawn_beside_the_servers(
    page: Any, origin: str, backend: FakeBackend, shoot: Any
) -> None:
    made = httpx2.post(
        f"{origin}/v1/responses", json={"model": backend.model, "input": "Hi"}, timeout=10
    )
    response_id = made.json()["id"]
    bare = httpx2.post(
        f"{origin}/v1/responses", json={"model": backend.model, "input": "Hi"}, timeout=10
    )
    data = [
        {"object": "trace", "id": "trace_sdk1", "workflow_name": "Weather workflow"},
        _span("span_a", None, "00.000", "01.500", {"type": "agent", "name": "weather"}),
        _span(
            "span_r", "span_a", "00.100", "00.900", {"type": "response", "response_id": response_id}
        ),
        _span("span_f", "span_a", "01.000", "01.200", {"type": "function", "name": "get_weather"}),
    ]
    ingested = httpx2.post(f"{origin}/v1/traces/ingest", json={"data": data}, timeout=10)
    assert ingested.json() == {"object": "trace.ingest", "traces": 1, "spans": 3}

    page.goto(f"{origin}/console/#/logs/{response_id}")

    expect(page.locator("section.trace").first.locator(".waterfall")).to_be_visible()
    sdk = page.locator("section.sdk-trace")
    expect(sdk.get_by_role("heading")).to_have_text("Agents SDK trace")
    expect(sdk).to_contain_text("Weather workflow")
    spans = sdk.locator("li.span")
    expect(spans).to_have_count(3)
    expect(spans.nth(0)).to_contain_text("agent weather")
    expect(spans.nth(1)).to_contain_text(f"response {response_id}")
    expect(spans.nth(2)).to_contain_text("function get_weather")
    expect(spans.nth(2).locator(".duration")).to_have_text("200.0 ms")
    shoot("sdk-trace")

    page.goto(f"{origin}/console/#/logs/{bare.json()['id']}")
    expect(page.locator("section.trace .waterfall")).to_be_visible()
    expect(page.locator("section.sdk-trace")).to_have_count(0)
