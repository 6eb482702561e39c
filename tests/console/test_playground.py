"""The playground and the logs in Chromium against a real server (the fake backend): a streamed
turn that calls a function tool, answered by hand, then its log entry and trace."""

from __future__ import annotations

import json
import re
from typing import Any

from playwright.sync_api import expect

from agentloom.inference.scripted import ScriptedModel, delay, reasoning, text, tool_call
from agentloom.testing.backend import FakeBackend
from tests.e2e.support import received


def test_a_streamed_turn_with_a_function_call_answered_by_hand(
    page: Any, origin: str, scripted: ScriptedModel, backend: FakeBackend, shoot: Any
) -> None:
    scripted.add_turn(
        reasoning("The user wants the weather; ask the tool.", chunk_size=8),
        tool_call("get_weather", {"city": "Paris"}, "call_w1"),
    )
    scripted.add_turn(text("It is sunny in Paris, 22 degrees.", chunk_size=5))
    page.goto(f"{origin}/console/")

    expect(page.get_by_label("Model")).to_have_value(backend.model)
    tools = page.get_by_label("Function tools (JSON)")
    tools.fill(tools.get_attribute("placeholder"))  # the example the page offers: get_weather
    page.get_by_label("Input").fill("What is the weather in Paris?")
    page.get_by_role("button", name="Send").click()

    first = page.locator(".turn").nth(0)
    expect(first).to_have_attribute("data-status", "completed")
    expect(first.locator("[data-type=reasoning]")).to_contain_text("ask the tool")
    call = first.locator("[data-type=function_call]")
    expect(call).to_contain_text("get_weather")
    expect(call).to_contain_text('"city": "Paris"')
    page.get_by_label(re.compile(r"get_weather.*call_w1")).fill("sunny, 22C")
    page.get_by_role("button", name="Submit outputs").click()

    second = page.locator(".turn").nth(1)
    expect(second).to_have_attribute("data-status", "completed")
    expect(second.locator("[data-type=message]")).to_have_text(
        re.compile("It is sunny in Paris, 22 degrees.")
    )
    tool_message = received(backend)[-1]["messages"][-1]
    assert tool_message == {"role": "tool", "tool_call_id": "call_w1", "content": "sunny, 22C"}
    first_id = first.locator(".turn-status a").inner_text()
    page.locator(".snippets summary").click()
    expect(page.locator("code.python")).to_contain_text(f'previous_response_id="{first_id}"')
    expect(page.locator("code.curl")).to_contain_text('"type": "function_call_output"')
    shoot("playground")

    second.locator(".turn-status a").click()
    expect(page.get_by_role("heading", name="Output")).to_be_visible()
    expect(
        page.locator("section").filter(has_text="Input").locator("[data-type=function_call_output]")
    ).to_contain_text("sunny, 22C")
    expect(page.locator(".facts")).to_contain_text(first_id)
    trace = page.locator("section.trace")  # the server's own trace of the turn
    expect(trace.locator(".waterfall")).to_be_visible()
    expect(trace.locator("li.span[data-kind=response]")).to_have_count(1)
    expect(trace.locator("li.span[data-kind=model_call]")).to_have_count(1)
    expect(trace.locator("li.span[data-kind=model_call]")).to_contain_text(f"chat {backend.model}")
    shoot("response")

    page.get_by_role("link", name="← Logs").click()
    rows = page.locator("table tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("It is sunny in Paris")  # newest first
    expect(rows.nth(1)).to_contain_text("get_weather")
    shoot("logs")


def open_with_trace(page: Any, origin: str, status: int, body: dict[str, Any]) -> None:
    """A turn sent from the playground, then its log entry opened, its trace answered with
    ``status`` and ``body`` instead of the server's."""
    page.route(
        re.compile(r".*/v1/responses/[^/]+/trace$"),
        lambda route: route.fulfill(
            status=status, content_type="application/json", body=json.dumps(body)
        ),
    )
    page.goto(f"{origin}/console/")
    page.get_by_label("Input").fill("Hello")
    page.get_by_role("button", name="Send").click()
    expect(page.locator(".turn")).to_have_attribute("data-status", "completed")
    page.locator(".turn-status a").click()


def test_a_trace_is_drawn_as_a_waterfall(
    page: Any, origin: str, scripted: ScriptedModel, shoot: Any
) -> None:
    scripted.add_turn("Traced.")
    trace = {
        "object": "response.trace",
        "response_id": "",
        "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
        "started_at": 1_790_000_000.0,
        "duration_ms": 120.0,
        "truncated": False,
        "spans": [
            {
                "name": "response",
                "kind": "response",
                "start_ms": 0.0,
                "duration_ms": 120.0,
                "status": "ok",
                "attributes": {},
            },
            {
                "name": "chat fake-model",
                "kind": "model_call",
                "start_ms": 5.0,
                "duration_ms": 60.0,
                "status": "ok",
                "attributes": {"gen_ai.usage.input_tokens": 12},
            },
            {
                "name": "file_search",
                "kind": "tool_call",
                "start_ms": 70.0,
                "duration_ms": 40.0,
                "status": "error",
                "error": "store gone",
                "attributes": {},
            },
        ],
    }
    open_with_trace(page, origin, 200, trace)

    spans = page.locator(".waterfall .span")
    expect(spans).to_have_count(3)
    expect(page.locator(".facts")).to_contain_text("120.0 ms")  # the trace's, not whole seconds
    expect(spans.nth(1)).to_contain_text("model_call")
    expect(spans.nth(1)).to_contain_text("60.0 ms")
    expect(spans.nth(2)).to_contain_text("error: store gone")
    width = spans.nth(1).locator(".bar").evaluate("el => el.style.width")
    assert width == "50%"
    expect(page.locator(".waterfall")).to_contain_text("4bf92f3577b34da6a3ce929d0e0e4736")
    shoot("trace")


def test_a_response_without_a_trace_says_so(
    page: Any, origin: str, scripted: ScriptedModel
) -> None:
    """A stored response with no trace (stored before traces were kept, or passed through to a
    backend's own Responses API) is told as such: the server's 404 ``trace_not_found``."""
    scripted.add_turn("Untraced.")
    missing = {"error": {"message": "No trace", "type": "invalid_request_error", "param": None,
                         "code": "trace_not_found"}}  # fmt: skip
    open_with_trace(page, origin, 404, missing)
    # no trace: whole seconds (1 s when the turn crossed a second's boundary)
    expect(page.locator(".facts")).to_contain_text(re.compile(r"Duration\s*(under )?1 s"))

    expect(page.locator("section.trace .no-trace")).to_have_text(
        "No trace recorded for this response."
    )


def test_the_answer_is_drawn_while_it_streams(
    page: Any, origin: str, scripted: ScriptedModel
) -> None:
    scripted.add_turn(reasoning("Counting."), "One, two,", delay(1.0), " three.")
    page.goto(f"{origin}/console/")
    page.get_by_label("Input").fill("Count to three")
    page.get_by_role("button", name="Send").click()

    turn = page.locator(".turn")
    expect(turn.locator("[data-type=message]")).to_contain_text("One, two,")
    expect(turn).to_have_attribute("data-status", "streaming")  # the rest is a second away
    expect(turn.locator("[data-type=message]")).not_to_contain_text("three")
    expect(turn).to_have_attribute("data-status", "completed")
    expect(turn.locator("[data-type=message]")).to_contain_text("One, two, three.")


def test_a_background_response_runs_live_and_is_cancelled(
    page: Any, origin: str, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Starting", delay(30), " never")
    page.goto(f"{origin}/console/")
    page.get_by_label("background").check()
    page.get_by_label("Input").fill("Work slowly")
    page.get_by_role("button", name="Send").click()
    link = page.locator(".turn-status a")
    expect(link).to_be_visible()
    page.goto(f"{origin}/console/#/logs/{link.inner_text()}")

    live = page.locator(".live")
    expect(live).to_contain_text("Running in the background")
    expect(
        page.locator("section").filter(has_text="Output").locator("[data-type=message]")
    ).to_contain_text("Starting")
    live.get_by_role("button", name="Cancel").click()
    expect(page.locator(".facts .badge")).to_have_text("cancelled", timeout=15_000)
    expect(live).to_be_empty()
