"""``NaN``, ``Infinity`` and numbers past a double's range are not JSON: every body and every
WebSocket frame holding one is refused with a 400 naming where it is, before anything is
stored (it used to be stored as ``null``)."""

from __future__ import annotations

import json
import math
import sys
from typing import Any

import httpx2
import openai
import pytest

from agentloom.config import Settings
from agentloom.errors import InvalidRequestError
from agentloom.inference.base import TextDelta, TokenLogprob
from agentloom.inference.scripted import ScriptedModel
from agentloom.server.app import create_app
from agentloom.server.json_numbers import check_finite, non_finite
from agentloom.testing.backend import FakeBackend, serve_async
from tests.plugins.server import running
from tests.server.test_errors import the_error

NAN_SCHEMA = '{"type": "object", "properties": {"x": {"type": "number", "minimum": NaN}}}'
TOOL_PATH = "tools[0].parameters.properties.x.minimum"
HELLO: Any = [{"role": "user", "content": "Hi"}]


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


# --- what the server writes ------------------------------------------------------------------

LOWEST = -sys.float_info.max
ODD = (TokenLogprob("a", -math.inf), TokenLogprob("b", math.nan), TokenLogprob("c", -0.5))


def strict(text: str) -> Any:
    """``text`` read as JSON, which has no NaN or Infinity (``json`` reads them otherwise)."""

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} written: not JSON")

    return json.loads(text, parse_constant=refuse)


def events(body: str) -> list[Any]:
    lines = [line[len("data: ") :] for line in body.splitlines() if line.startswith("data: ")]
    return [strict(line) for line in lines if line != "[DONE]"]


def chunk_logprobs(chunk: Any) -> list[float]:
    choice = chunk["choices"][0] if chunk["choices"] else {}
    return [t["logprob"] for t in (choice.get("logprobs") or {}).get("content") or []]


async def test_a_backends_non_finite_logprobs_are_numbers_json_has_in_chat_completions(
    client: openai.AsyncOpenAI,
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    odd = (TokenLogprob("a", -math.inf), TokenLogprob("b", -0.5))
    scripted.add_turn(TextDelta("ab", logprobs=odd))
    scripted.add_turn(TextDelta("ab", logprobs=odd))
    body = {"model": backend.model, "messages": HELLO, "logprobs": True}

    whole = await client.chat.completions.with_raw_response.create(**body)
    streamed = await http.post("/chat/completions", json={**body, "stream": True})

    assert chunk_logprobs(strict(whole.text)) == [LOWEST, -0.5]
    assert [lp for chunk in events(streamed.text) for lp in chunk_logprobs(chunk)] == [
        LOWEST,
        -0.5,
    ]


async def test_a_backends_non_finite_logprobs_are_numbers_json_has_in_responses(
    client: openai.AsyncOpenAI,
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    scripted.add_turn(TextDelta("abc", logprobs=ODD))
    scripted.add_turn(TextDelta("abc", logprobs=ODD))
    include: Any = ["message.output_text.logprobs"]
    body = {"model": backend.model, "input": "hi", "include": include}

    whole = await client.responses.with_raw_response.create(**body)
    streamed = await http.post("/responses", json={**body, "stream": True})

    output = strict(whole.text)["output"][0]["content"][0]["logprobs"]
    assert [t["logprob"] for t in output] == [LOWEST, LOWEST, -0.5]
    done = [e for e in events(streamed.text) if e["type"] == "response.output_text.done"]
    assert [t["logprob"] for t in done[0]["logprobs"]] == [LOWEST, LOWEST, -0.5]
