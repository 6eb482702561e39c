"""``NaN``, ``Infinity`` and numbers past a double's range are not JSON: every body and every
WebSocket frame holding one is refused with a 400 naming where it is, before anything is
stored (it used to be stored as ``null``)."""

from __future__ import annotations

import json

import httpx2
import pytest

from agentloom.config import Settings
from agentloom.errors import InvalidRequestError
from agentloom.server.app import create_app
from agentloom.server.json_numbers import check_finite, non_finite
from agentloom.testing.backend import FakeBackend, serve_async
from tests.plugins.server import running
from tests.server.test_errors import the_error

NAN_SCHEMA = '{"type": "object", "properties": {"x": {"type": "number", "minimum": NaN}}}'
TOOL_PATH = "tools[0].parameters.properties.x.minimum"


@pytest.mark.parametrize(
    ("raw", "path", "number"),
    [
        (b"NaN", "", "nan"),
        (b'{"a": [1, 2, {"b": Infinity}]}', "a[2].b", "inf"),
        (b'{"a": -Infinity, "b": NaN}', "a", "-inf"),  # the first, in document order
        (b'{"a": [1e400]}', "a[0]", "inf"),
        (b'{"a": -1e+400}', "a", "-inf"),
        (b'{"a": ' + b"1" * 400 + b".5}", "a", "inf"),
    ],
)
def test_the_first_number_that_is_not_json_is_found_by_path(
    raw: bytes, path: str, number: str
) -> None:
    with pytest.raises(InvalidRequestError) as refused:
        check_finite(raw)

    assert refused.value.param == (path or None)
    assert refused.value.code == "invalid_json"
    assert "not valid JSON" in refused.value.stated()
    found = non_finite(json.loads(raw))
    assert found is not None
    assert (found[0], repr(found[1])) == (path, number)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"text": "NaN, Infinity and 1e400 in a string"}',
        b'{"small": 1e-400, "large": 1.7e308, "integer": ' + b"9" * 400 + b"}",
        b'{"not json": NaN',  # left to the parser, which says the body is not JSON
    ],
)
def test_finite_numbers_and_strings_pass(raw: bytes) -> None:
    check_finite(raw)


async def test_a_nan_in_a_tool_schema_is_a_400_naming_it(
    http: httpx2.AsyncClient, backend: FakeBackend
) -> None:
    # written by hand: the openai package (through httpx) refuses to send NaN, other clients do
    tool = f'{{"type": "function", "name": "f", "parameters": {NAN_SCHEMA}}}'
    body = f'{{"model": "{backend.model}", "input": "hi", "tools": [{tool}]}}'

    error = the_error(await http.post("/responses", content=body), 400)

    assert (error["param"], error["code"]) == (TOOL_PATH, "invalid_json")
    assert error["message"].startswith(f"Invalid value for '{TOOL_PATH}': NaN is not valid JSON")
    assert backend.requests == []
    assert (await http.get("/responses")).json()["data"] == []  # nothing stored


@pytest.mark.parametrize(
    "path",
    [
        "/responses",
        "/responses/input_tokens",
        "/responses/compact",
        "/conversations",
        "/chat/completions",
        "/completions",
        "/embeddings",
        "/moderations",
        "/vector_stores",
        "/containers",
        "/prompts",
        "/webhook_endpoints",
        "/managed-agents",
        "/organization/projects",
        "/organization/admin_api_keys",
    ],
)
async def test_every_route_refuses_a_number_that_is_not_json(
    http: httpx2.AsyncClient, backend: FakeBackend, path: str
) -> None:
    body = f'{{"model": "{backend.model}", "input": "hi", "extra": {{"k": [1, -Infinity]}}}}'

    error = the_error(await http.post(path, content=body), 400)

    assert (error["param"], error["code"]) == ("extra.k[1]", "invalid_json"), path
    assert "-Infinity is not valid JSON" in error["message"]


async def test_a_float_parameter_that_is_not_finite_is_refused_by_name(
    http: httpx2.AsyncClient, backend: FakeBackend
) -> None:
    body = f'{{"model": "{backend.model}", "input": "hi", "temperature": NaN}}'

    error = the_error(await http.post("/responses", content=body), 400)

    assert (error["param"], error["code"]) == ("temperature", "invalid_json")
    assert backend.requests == []


async def test_a_websocket_frame_is_refused_the_same_way(
    settings: Settings, backend: FakeBackend
) -> None:
    from websockets.asyncio.client import connect

    frame = (
        f'{{"type": "response.create", "model": "{backend.model}", "input": "hi", '
        f'"tools": [{{"type": "function", "name": "f", "parameters": {NAN_SCHEMA}}}]}}'
    )
    async with (
        running(create_app(settings)) as app,
        serve_async(app, lifespan=False) as url,
        connect(url.replace("http", "ws") + "/responses") as ws,
    ):
        await ws.send(frame)
        error = json.loads(await ws.recv())

    assert (error["type"], error["status"]) == ("error", 400)
    assert (error["error"]["param"], error["error"]["code"]) == (TOOL_PATH, "invalid_json")
    assert backend.requests == []
