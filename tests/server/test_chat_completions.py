"""``POST /v1/chat/completions`` through the official ``openai`` client: the request reaches the
backend as it was sent (model id mapped), the answer comes back as the backend gave it, under
the caller's project (model permissions, rate limits, usage)."""

from __future__ import annotations

import time
from collections.abc import Awaitable
from typing import Any

import httpx2
import openai
import pytest

from agentloom.config import Settings
from agentloom.errors import UpstreamError, UpstreamRateLimitError
from agentloom.inference.scripted import (
    ScriptedModel,
    break_stream,
    raise_error,
    reasoning,
    text,
    tool_call,
)
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import audited_client
from tests.plugins.tenants import ADMIN, Tenant, new_tenant, sdk
from tests.server.test_tenancy_limits import eventually, limit

HELLO = [{"role": "user", "content": "Hi"}]
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


async def test_a_chat_completion_is_the_backends_answer(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hello there!")

    answer = await client.chat.completions.create(
        model=backend.model, messages=HELLO, temperature=0.3, extra_body={"top_k": 7}
    )

    assert answer.object == "chat.completion"
    assert answer.model == backend.model
    assert answer.choices[0].message.content == "Hello there!"
    assert answer.choices[0].finish_reason == "stop"
    assert answer.usage is not None
    assert answer.usage.completion_tokens > 0
    sent = backend.requests[-1]
    assert sent["messages"] == HELLO
    assert (sent["temperature"], sent["top_k"]) == (0.3, 7)  # passed on as sent
    assert not sent.get("stream")


async def test_tool_calls_come_back_and_results_go_out(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("get_weather", {"city": "Paris"}, call_id="call_1"))
    scripted.add_turn("Sunny.")

    first = await client.chat.completions.create(
        model=backend.model,
        messages=HELLO,
        tools=[WEATHER],  # type: ignore[list-item]
    )
    calls = first.choices[0].message.tool_calls
    assert calls is not None
    assert first.choices[0].finish_reason == "tool_calls"
    call: Any = calls[0]
    assert (call.id, call.function.name) == ("call_1", "get_weather")
    followup: list[Any] = [
        *HELLO,
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]
    second = await client.chat.completions.create(
        model=backend.model,
        messages=followup,
        tools=[WEATHER],  # type: ignore[list-item]
    )

    assert second.choices[0].message.content == "Sunny."
    assert backend.requests[-1]["messages"][-1]["tool_call_id"] == "call_1"
    assert backend.requests[-1]["tools"] == [WEATHER]


@pytest.mark.parametrize("include_usage", [False, True])
async def test_a_stream_is_passed_on_and_usage_only_when_asked(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    include_usage: bool,
) -> None:
    scripted.add_turn(reasoning("Think."), text("Hello there!", chunk_size=3))
    options = {"include_usage": True} if include_usage else None

    stream = await client.chat.completions.create(
        model=backend.model, messages=HELLO, stream=True, stream_options=options
    )
    chunks = [chunk async for chunk in stream]

    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert content == "Hello there!"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert {c.model for c in chunks} == {backend.model}
    usage = [c.usage for c in chunks if c.usage is not None]
    assert (len(usage) == 1) is include_usage
    assert backend.requests[-1]["stream_options"] == {"include_usage": True}  # the ledger's


async def test_the_served_name_is_written_back(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    """``provider/model`` reaches the backend as its own id; the answers carry the name used."""
    scripted.add_turn("one")
    scripted.add_turn("two")
    named = f"fake/{backend.model}"

    answer = await client.chat.completions.create(model=named, messages=HELLO)
    stream = await client.chat.completions.create(model=named, messages=HELLO, stream=True)
    chunks = [chunk async for chunk in stream]

    assert answer.model == named
    assert {c.model for c in chunks} == {named}
    assert [r["model"] for r in backend.requests[-2:]] == [backend.model, backend.model]


@pytest.mark.parametrize(
    ("error", "exception", "status"),
    [
        (UpstreamError("model crashed", status=500), openai.InternalServerError, 502),
        (UpstreamRateLimitError("slow down", status=429), openai.RateLimitError, 429),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
async def test_a_backend_failure_is_an_openai_error(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    error: UpstreamError,
    exception: type[openai.APIStatusError],
    status: int,
    stream: bool,
) -> None:
    scripted.add_turn(raise_error(error))

    with pytest.raises(exception) as caught:
        await client.chat.completions.create(model=backend.model, messages=HELLO, stream=stream)

    assert caught.value.status_code == status


async def test_a_stream_broken_midway_ends_with_an_error_event(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(text("Hel"), break_stream())
    body = {"model": backend.model, "messages": HELLO, "stream": True}

    reply = await http.post("/chat/completions", json=body)

    assert reply.status_code == 200
    events = [line for line in reply.text.split("\n\n") if line]
    assert '"Hel"' in events[0]
    assert events[-1].startswith('data: {"error": {')
    assert '"type": "server_error"' in events[-1]
    assert "data: [DONE]" not in reply.text


@pytest.mark.parametrize(
    ("body", "status", "param"),
    [
        ({"messages": HELLO}, 400, "model"),
        ({"model": "m"}, 400, "messages"),
        ({"model": "fake-model", "messages": []}, 400, "messages"),
        ({"model": "fake-model", "messages": ["hi"]}, 400, "messages[0]"),
        ({"model": "no-such-model", "messages": HELLO}, 404, "model"),
        ({"model": "fake-model", "messages": HELLO, "stream": "yes"}, 400, "stream"),
    ],
)
async def test_bad_requests_are_openai_errors(
    http: httpx2.AsyncClient, body: dict[str, Any], status: int, param: str
) -> None:
    reply = await http.post("/chat/completions", json=body)

    assert reply.status_code == status, reply.text
    error = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["param"] == param


@pytest.mark.parametrize("raw", [b"", b"[1, 2]", b"{not json", b"null"])
async def test_a_body_that_is_not_an_object_is_a_400(http: httpx2.AsyncClient, raw: bytes) -> None:
    reply = await http.post(
        "/chat/completions", content=raw, headers={"content-type": "application/json"}
    )

    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["type"] == "invalid_request_error"


# --- the caller's project ----------------------------------------------------------------------


async def test_a_denied_model_is_not_found_for_that_project(
    raw: httpx2.AsyncClient, alpha: Tenant, beta: Tenant, backend: FakeBackend
) -> None:
    projects = sdk(raw, admin_api_key=ADMIN).admin.organization.projects
    await projects.model_permissions.update(
        alpha.project_id, mode="deny_list", model_ids=[backend.model]
    )

    with pytest.raises(openai.NotFoundError) as refused:
        await alpha.client.chat.completions.create(model=backend.model, messages=HELLO)
    answer = await beta.client.chat.completions.create(model=backend.model, messages=HELLO)

    assert refused.value.code == "model_not_found"
    assert answer.choices[0].message.content


async def test_rate_limits_apply(
    raw: httpx2.AsyncClient, alpha: Tenant, backend: FakeBackend
) -> None:
    await limit(raw, alpha, backend.model, max_requests_per_1_minute=1)

    await alpha.client.chat.completions.create(model=backend.model, messages=HELLO)
    with pytest.raises(openai.RateLimitError):
        await alpha.client.chat.completions.create(model=backend.model, messages=HELLO)


@pytest.mark.both_databases
async def test_usage_is_recorded_for_the_project(keyed: Settings, backend: FakeBackend) -> None:
    quick = keyed.model_copy(
        update={"server": keyed.server.model_copy(update={"usage_flush_interval": 0.05})}
    )
    start = int(time.time()) // 86_400 * 86_400
    async with audited_client(quick) as raw:
        tenant = await new_tenant(raw, "alpha")
        await tenant.client.chat.completions.create(model=backend.model, messages=HELLO)
        stream = await tenant.client.chat.completions.create(
            model=backend.model, messages=HELLO, stream=True
        )
        _ = [chunk async for chunk in stream]
        usage = sdk(raw, admin_api_key=ADMIN).admin.organization.usage

        def report() -> Awaitable[Any]:
            return usage.completions(start_time=start, project_ids=[tenant.project_id])

        page = await eventually(
            report, lambda p: sum(r.num_model_requests for b in p.data for r in b.results) == 2
        )

        # as the console's usage page asks
        grouped = await usage.completions(
            start_time=start, bucket_width="1d", group_by=["project_id", "model"]
        )

    results = [r for b in page.data for r in b.results]
    assert sum(r.input_tokens for r in results) > 0
    assert sum(r.output_tokens for r in results) > 0
    rows = [r for b in grouped.data for r in b.results]
    assert {(r.project_id, r.model) for r in rows} == {(tenant.project_id, backend.model)}


# --- the legacy POST /v1/completions -----------------------------------------------------------


async def test_a_legacy_completion_is_passed_through(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Paris.")
    scripted.add_turn(text("Rome, then Oslo.", chunk_size=4))

    whole = await client.completions.create(
        model=f"fake/{backend.model}", prompt="The capital of France is", max_tokens=5
    )
    stream = await client.completions.create(
        model=backend.model, prompt="Two capitals:", stream=True
    )
    chunks = [chunk async for chunk in stream]

    assert whole.object == "text_completion"
    assert whole.model == f"fake/{backend.model}"
    assert whole.choices[0].text == "Paris."
    assert whole.usage is not None
    assert "".join(c.choices[0].text for c in chunks if c.choices) == "Rome, then Oslo."
    assert [c.usage for c in chunks if c.usage] == []  # not asked for
    first, second = backend.completion_requests
    assert (first["prompt"], first["max_tokens"], first["model"]) == (
        "The capital of France is",
        5,
        backend.model,
    )
    assert second["stream_options"] == {"include_usage": True}


async def test_a_backend_without_the_legacy_api_says_so(
    http: httpx2.AsyncClient, backend: FakeBackend
) -> None:
    backend.completions = False

    reply = await http.post("/completions", json={"model": backend.model, "prompt": "Hi"})

    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert (error["param"], error["code"]) == ("model", "model_not_supported")
    assert "does not serve the legacy Completions API" in error["message"]


@pytest.mark.parametrize(
    ("body", "param"),
    [({"model": "fake-model"}, "prompt"), ({"model": "fake-model", "prompt": {"a": 1}}, "prompt")],
)
async def test_a_legacy_request_without_a_prompt_is_a_400(
    http: httpx2.AsyncClient, body: dict[str, Any], param: str
) -> None:
    reply = await http.post("/completions", json=body)

    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["param"].startswith(param)
