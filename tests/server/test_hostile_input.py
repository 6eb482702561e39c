"""Hostile input: deep nesting, oversized lists, huge bodies and odd bytes get a clear 400 in
OpenAI's envelope, never a 5xx, a traceback or a hang."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from agentloom.api.limits import RequestLimits
from agentloom.config import Settings
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import audited_client, make_settings, running
from tests.server.test_errors import the_error

SMALL = RequestLimits(
    max_json_depth=32, max_json_values=5_000, max_input_items=5, max_content_parts=3, max_tools=4
)


def nested(depth: int) -> str:
    """JSON text nested ``depth`` levels deep (objects and arrays in turn), built as text: the
    standard library cannot encode it past about 1,000 levels."""
    opens = "".join("[" if level % 2 else '{"k":' for level in range(depth))
    closes = "".join("]" if level % 2 else "}" for level in reversed(range(depth)))
    return f'{opens}"bottom"{closes}'


@pytest.fixture
def small_settings(backend: FakeBackend, tmp_path: Path) -> Settings:
    settings = make_settings(backend, f"sqlite:///{tmp_path / 'hostile.db'}")
    return settings.model_copy(update={"limits": SMALL})


@pytest.fixture
async def small(small_settings: Settings) -> AsyncIterator[httpx2.AsyncClient]:
    async with audited_client(small_settings) as raw:
        yield raw


@pytest.mark.parametrize(
    "where",
    [
        '"metadata": {{"k": {}}}',
        '"tools": [{{"type": "function", "name": "f", "parameters": {}}}]',
        '"an_unknown_field": {}',
        '"input": [{}]',
    ],
    ids=["metadata", "tool schema", "unknown field", "input"],
)
@pytest.mark.parametrize("depth", [129, 1_000, 100_000])
async def test_deep_nesting_is_a_400_naming_the_limit(
    http: httpx2.AsyncClient, backend: FakeBackend, where: str, depth: int
) -> None:
    body = f'{{"model": "{backend.model}", "input": "hi", {where.format(nested(depth))}}}'

    error = the_error(await http.post("/responses", content=body), 400)

    assert error["code"] == "json_too_deep"
    assert "at most 128 levels" in error["message"]
    assert backend.requests == []


async def test_nesting_within_the_limit_is_accepted(
    http: httpx2.AsyncClient, backend: FakeBackend
) -> None:
    schema = {"type": "object", "properties": {"a": json.loads(nested(100))}}
    tools = [{"type": "function", "name": "f", "parameters": schema}]
    body = {"model": backend.model, "input": "hi", "tools": tools}

    reply = await http.post("/responses", json=body)

    assert reply.status_code == 200, reply.text


async def test_every_route_refuses_deep_bodies(http: httpx2.AsyncClient) -> None:
    deep = f'{{"metadata": {nested(500)}}}'
    for path in ("/conversations", "/vector_stores", "/responses/input_tokens", "/prompts"):
        error = the_error(await http.post(path, content=deep), 400)
        assert error["code"] == "json_too_deep", path


async def test_too_many_values_is_a_400(small: httpx2.AsyncClient, backend: FakeBackend) -> None:
    body = {"model": backend.model, "input": "hi", "junk": list(range(6_000))}

    error = the_error(await small.post("/responses", json=body), 400)

    assert error["code"] == "json_too_large"
    assert "at most 5000" in error["message"]


@pytest.mark.parametrize(
    ("body", "param", "most", "length"),
    [
        ({"input": [{"role": "user", "content": "x"}] * 6}, "input", 5, 6),
        (
            {"input": [{"role": "user", "content": [{"type": "input_text", "text": "x"}] * 4}]},
            "input[0].content",
            3,
            4,
        ),
        ({"tools": [{"type": "function", "name": f"f{i}"} for i in range(5)]}, "tools", 4, 5),
        (
            {
                "tools": [
                    {
                        "type": "namespace",
                        "name": "n",
                        "tools": [{"type": "function", "name": f"f{i}"} for i in range(5)],
                    }
                ]
            },
            "tools[0].tools",
            4,
            5,
        ),
    ],
    ids=["input items", "content parts", "tools", "namespace tools"],
)
async def test_lists_over_the_limits_are_refused_as_openai_does(
    small: httpx2.AsyncClient,
    backend: FakeBackend,
    body: dict[str, Any],
    param: str,
    most: int,
    length: int,
) -> None:
    reply = await small.post("/responses", json={"model": backend.model, "input": "hi", **body})

    error = the_error(reply, 400)
    assert (error["param"], error["code"]) == (param, "array_above_max_length")
    assert error["message"] == (
        f"Invalid '{param}': array too long. Expected an array with maximum length {most}, "
        f"but got an array with length {length} instead."
    )
    assert backend.requests == []


async def test_lists_at_the_limits_are_accepted(
    small: httpx2.AsyncClient, backend: FakeBackend
) -> None:
    parts = [{"type": "input_text", "text": "x"}] * 3
    body = {
        "model": backend.model,
        "input": [{"role": "user", "content": parts}] * 5,
        "tools": [{"type": "function", "name": f"f{i}"} for i in range(4)],
    }

    reply = await small.post("/responses", json=body)

    assert reply.status_code == 200, reply.text


async def test_a_websocket_frame_is_held_to_the_same_limits(
    small_settings: Settings, backend: FakeBackend
) -> None:
    from websockets.asyncio.client import connect

    from agentloom.testing.backend import serve_async

    async with (
        running(create_app(small_settings)) as app,
        serve_async(app, lifespan=False) as url,
        connect(url.replace("http", "ws") + "/responses") as ws,
    ):
        create = {"type": "response.create", "model": backend.model}
        await ws.send(json.dumps({**create, "metadata": json.loads(nested(40))}))
        deep = json.loads(await ws.recv())
        await ws.send(json.dumps({**create, "input": [{"role": "user", "content": "x"}] * 6}))
        long = json.loads(await ws.recv())

    assert (deep["type"], deep["status"], deep["error"]["code"]) == ("error", 400, "json_too_deep")
    assert (long["error"]["param"], long["error"]["code"]) == ("input", "array_above_max_length")


async def test_the_unknown_tool_type_error_lists_every_accepted_type(
    http: httpx2.AsyncClient, backend: FakeBackend
) -> None:
    body = {"model": backend.model, "input": "hi", "tools": [{"type": "image_generation"}]}

    error = the_error(await http.post("/responses", json=body), 400)

    assert error["param"] == "tools[0].type"
    for kind in ("function", "custom", "namespace", "tool_search", "file_search", "mcp"):
        assert f" {kind}," in error["message"] or f" {kind}." in error["message"], kind
    assert "code_interpreter" in error["message"]
    assert "web_search_preview" in error["message"]


@pytest.mark.parametrize(
    "headers",
    [{}, {"content-type": "application/x-www-form-urlencoded"}, {"content-type": "text/plain"}],
    ids=["no content type", "curl -d default", "text/plain"],
)
async def test_a_json_body_is_read_whatever_its_content_type(
    http: httpx2.AsyncClient, backend: FakeBackend, headers: dict[str, str]
) -> None:
    """Deliberate (docs/limits.md): the body of every /v1 JSON route is JSON, whatever the
    Content-Type says, as ``curl -d`` users expect."""
    body = json.dumps({"model": backend.model, "input": "hi"}).encode()
    request = http.build_request("POST", "/responses", content=body)
    for name in ("content-type",):
        request.headers.pop(name, None)
    request.headers.update(headers)

    reply = await http.send(request)

    assert reply.status_code == 200, reply.text
    assert reply.json()["output"][0]["content"][0]["text"] == "hi"


@pytest.mark.parametrize(
    "raw",
    [b"\xff\xfe{not utf-8}", b'{"model": "m", "input": "\xed\xa0\x80"}', b"[" * 10_000, b"{" * 300],
    ids=["bad bytes", "lone surrogate in utf-8", "10k open brackets", "300 open braces"],
)
async def test_broken_bodies_are_a_400(http: httpx2.AsyncClient, raw: bytes) -> None:
    error = the_error(await http.post("/responses", content=raw), 400)
    assert error["code"] in ("invalid_json", "json_too_deep")
