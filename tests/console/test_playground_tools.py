"""The playground's tool settings in Chromium: an MCP server's call approved by hand (a real
MCP server from the ``mcp`` package, its Authorization header sent and never shown back), two
MCP servers with a function tool named by tool_choice, and tool_choice, temperature and a
structured-output schema as they reach the model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from agentloom.inference.scripted import ScriptedModel, tool_call
from agentloom.testing.backend import FakeBackend
from tests.e2e.support import received
from tests.server.mcp_support import McpServers, serving


@pytest.fixture(scope="module")
def mcp_servers() -> Iterator[McpServers]:
    with serving() as servers:
        yield servers


def test_an_mcp_call_approved_in_the_playground(
    page: Any, origin: str, scripted: ScriptedModel, mcp_servers: McpServers, shoot: Any
) -> None:
    scripted.add_turn(tool_call("add", {"a": 2, "b": 3}))
    scripted.add_turn("2 + 3 is 5.")
    page.goto(f"{origin}/console/")
    page.get_by_role("button", name="+ MCP server").click()
    server = page.get_by_role("group", name="MCP server", exact=True)
    server.get_by_label("Server label").fill("calc")
    server.get_by_label("Server URL").fill(mcp_servers.streamable_url)
    server.get_by_label("Allowed tools").fill("add, distance")
    server.get_by_label("Require approval").select_option("always")
    server.get_by_role("button", name="+ header").click()
    server.get_by_label("Header").fill("Authorization")
    server.get_by_label("Value").fill("Bearer s3cret")
    page.get_by_label("Input").fill("What is 2 + 3?")
    page.get_by_role("button", name="Send").click()

    first = page.locator(".turn").nth(0)
    expect(first).to_have_attribute("data-status", "completed")
    expect(first.locator("[data-type=mcp_list_tools]")).to_contain_text("add, distance")
    expect(first.locator("[data-type=mcp_approval_request]")).to_contain_text("calc.add")
    approvals = first.get_by_role("group", name="Approvals")
    expect(approvals).to_contain_text('"a": 2')
    shoot("playground-mcp-approval")
    approvals.get_by_role("button", name="Approve").click()

    second = page.locator(".turn").nth(1)
    expect(second).to_have_attribute("data-status", "completed")
    expect(second.locator(".user")).to_contain_text("approved")
    call = second.locator("[data-type=mcp_call]")
    expect(call).to_contain_text("calc.add")
    expect(call.get_by_label("output")).to_have_text("5")
    expect(second.locator("[data-type=message]")).to_contain_text("2 + 3 is 5.")
    expect(approvals).to_have_count(0)
    page.locator(".snippets summary").click()
    expect(page.locator("code.python")).to_contain_text('"type": "mcp_approval_response"')
    expect(page.locator("code.python")).to_contain_text('"Authorization": "<hidden>"')
    assert "s3cret" not in page.locator(".snippets").inner_text()
    assert "Bearer s3cret" in [h.get("authorization") for h in mcp_servers.recorder.headers]
    shoot("playground-mcp")


def test_two_mcp_servers_and_a_function_named_by_tool_choice(
    page: Any, origin: str, scripted: ScriptedModel, mcp_servers: McpServers, backend: FakeBackend
) -> None:
    scripted.add_turn(tool_call("get_weather", {"city": "Paris"}, "call_w"))
    page.goto(f"{origin}/console/")
    add = page.get_by_role("button", name="+ MCP server")
    for label, url, allowed in [
        ("calc", mcp_servers.streamable_url, "add"),
        ("gone", "http://127.0.0.1:9/mcp", ""),
        ("geo", mcp_servers.sse_url, "distance"),
    ]:
        add.click()
        server = page.get_by_role("group", name="MCP server", exact=True).last
        server.get_by_label("Server label").fill(label)
        server.get_by_label("Server URL").fill(url)
        server.get_by_label("Allowed tools").fill(allowed)
        server.get_by_label("Require approval").select_option("never")
    page.get_by_role("group", name="MCP server", exact=True).nth(1).get_by_role(
        "button", name="Remove server"
    ).click()
    expect(page.get_by_role("group", name="MCP server", exact=True)).to_have_count(2)
    tools = page.get_by_label("Function tools (JSON)")
    tools.fill(tools.get_attribute("placeholder"))
    page.get_by_label("Tool choice").select_option(label="function get_weather")
    page.get_by_label("Input").fill("Weather in Paris?")
    page.get_by_role("button", name="Send").click()

    turn = page.locator(".turn")
    expect(turn).to_have_attribute("data-status", "completed")
    expect(turn.locator("[data-type=function_call]")).to_contain_text("get_weather")
    lists = turn.locator("[data-type=mcp_list_tools]")
    expect(lists).to_have_count(2)
    expect(lists.nth(0)).to_contain_text("calc")
    expect(lists.nth(1)).to_contain_text("geo")
    sent = received(backend)[-1]
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    # the server offers the model only the tool named (both servers were listed, above)
    assert [t["function"]["name"] for t in sent["tools"]] == ["get_weather"]
    page.locator(".snippets summary").click()
    expect(page.locator("code.python")).to_contain_text('"name": "get_weather"')


def test_tool_choice_temperature_and_structured_output_reach_the_model(
    page: Any, origin: str, scripted: ScriptedModel, backend: FakeBackend
) -> None:
    scripted.add_turn('{"city": "Paris"}')
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    page.goto(f"{origin}/console/")
    tools = page.get_by_label("Function tools (JSON)")
    tools.fill(tools.get_attribute("placeholder"))  # get_weather: the model is told not to call it
    page.get_by_label("Tool choice").select_option("none")
    page.get_by_label("Temperature").fill("0.3")
    page.get_by_label("Output schema (JSON)").fill(
        json.dumps({"name": "place", "schema": schema | {"additionalProperties": False}})
    )
    page.get_by_label("Input").fill("Where is the Louvre?")
    page.get_by_role("button", name="Send").click()

    turn = page.locator(".turn")
    expect(turn).to_have_attribute("data-status", "completed")
    expect(turn.locator("[data-type=message]")).to_contain_text('{"city": "Paris"}')
    sent = received(backend)[-1]
    assert sent["temperature"] == 0.3
    assert "tools" not in sent  # tool_choice none: the server offers the model no tool
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["name"] == "place"
    assert sent["response_format"]["json_schema"]["schema"]["required"] == ["city"]
    page.locator(".snippets summary").click()
    expect(page.locator("code.python")).to_contain_text('tool_choice="none"')
    expect(page.locator("code.python")).to_contain_text("temperature=0.3")

    page.get_by_label("Temperature").fill("7")
    page.get_by_label("Input").fill("Again")
    page.get_by_role("button", name="Send").click()
    assert page.get_by_label("Temperature").evaluate("el => el.validity.rangeOverflow")
    expect(page.locator(".turn")).to_have_count(1)  # the browser's own check held it back
