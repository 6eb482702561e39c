"""Every error is OpenAI's envelope ``{"error": {"message", "type", "param", "code"}}``.

Table-driven: each row is one mistake, the HTTP status it must give and the exact ``param`` and
``code`` the server names. A request refused at validation reaches neither the model nor the
database. The ``openai`` SDK must raise the exception class that matches each status.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2
import openai
import pytest

from agentloom.server.app import create_app
from agentloom.testing.backend import DEFAULT_MODEL, FakeBackend
from tests.plugins.server import BASE_URL, make_settings, running

MODEL = DEFAULT_MODEL
SMALL_LIMIT = 1024  # the smallest max_body_bytes the configuration accepts


def the_error(reply: httpx2.Response, status: int) -> dict[str, Any]:
    """The ``error`` object of ``reply``, after checking the status and the exact envelope."""
    assert reply.status_code == status, reply.text
    assert reply.headers["content-type"].startswith("application/json")
    body = reply.json()
    assert list(body) == ["error"], body
    error: dict[str, Any] = body["error"]
    assert set(error) == {"message", "type", "param", "code"}, error
    assert isinstance(error["message"], str)
    assert error["message"].strip()
    assert error["type"] in ("invalid_request_error", "server_error", "rate_limit_error")
    assert error["param"] is None or isinstance(error["param"], str)
    assert error["code"] is None or isinstance(error["code"], str)
    return error


def body(**fields: Any) -> dict[str, Any]:
    return {"model": MODEL, "input": "hi", **fields}


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": text}


# --- POST /v1/responses bodies -----------------------------------------------------------------

# (id, raw bytes or a JSON body, status, param, code)
Case = tuple[str, bytes | dict[str, Any], int, str | None, str | None]

BODY_CASES: list[Case] = [
    # not a JSON object at all
    ("malformed JSON", b'{"model": "x",', 400, None, "invalid_json"),
    ("empty body", b"", 400, None, None),
    ("JSON array", b"[1, 2]", 400, None, "invalid_value"),
    ("JSON string", b'"hello"', 400, None, "invalid_value"),
    ("JSON null", b"null", 400, None, "invalid_value"),
    # model
    ("missing model", {"input": "hi"}, 400, "model", "missing_required_parameter"),
    ("empty model", body(model=""), 400, "model", "invalid_value"),
    ("model not a string", body(model=7), 400, "model", "invalid_value"),
    ("unknown model", body(model="no-such-model"), 404, "model", "model_not_found"),
    # input
    ("input a number", body(input=42), 400, "input", "invalid_value"),
    ("input empty list", body(input=[]), 400, "input", "missing_required_parameter"),
    # conversation state
    (
        "unknown previous_response_id",
        body(previous_response_id="resp_missing"),
        404,
        "previous_response_id",
        "previous_response_not_found",
    ),
    (
        "conversation and previous_response_id",
        body(conversation="conv_1", previous_response_id="resp_1"),
        400,
        "previous_response_id",
        "invalid_request",
    ),
    # ranges
    ("temperature above 2", body(temperature=2.01), 400, "temperature", "invalid_value"),
    ("temperature below 0", body(temperature=-0.1), 400, "temperature", "invalid_value"),
    ("temperature a word", body(temperature="hot"), 400, "temperature", "invalid_value"),
    ("top_p above 1", body(top_p=1.01), 400, "top_p", "invalid_value"),
    ("top_p below 0", body(top_p=-0.01), 400, "top_p", "invalid_value"),
    ("max_output_tokens 15", body(max_output_tokens=15), 400, "max_output_tokens", "invalid_value"),
    ("max_output_tokens 0", body(max_output_tokens=0), 400, "max_output_tokens", "invalid_value"),
    ("max_tool_calls 0", body(max_tool_calls=0), 400, "max_tool_calls", "invalid_value"),
    ("top_logprobs 21", body(top_logprobs=21), 400, "top_logprobs", "invalid_value"),
    ("top_logprobs -1", body(top_logprobs=-1), 400, "top_logprobs", "invalid_value"),
    ("truncation unknown", body(truncation="sometimes"), 400, "truncation", "invalid_value"),
    # metadata: at most 16 pairs, keys of 64 characters, values of 512
    (
        "metadata 17 pairs",
        body(metadata={f"key{i}": "v" for i in range(17)}),
        400,
        "metadata",
        "invalid_value",
    ),
    ("metadata key of 65", body(metadata={"k" * 65: "v"}), 400, "metadata", "invalid_value"),
    ("metadata value of 513", body(metadata={"k": "v" * 513}), 400, "metadata", "invalid_value"),
    # tools and tool_choice
    (
        "tool_choice unknown mode",
        body(tool_choice="sometimes"),
        400,
        "tool_choice",
        "invalid_value",
    ),
    (
        "tool_choice names no offered tool",
        body(tool_choice={"type": "function", "name": "ghost"}),
        400,
        "tool_choice",
        None,
    ),
    (
        "tool_choice function without a name",
        body(tool_choice={"type": "function"}),
        400,
        "tool_choice.name",
        "missing_required_parameter",
    ),
    (
        "allowed_tools with a bad mode",
        body(tool_choice={"type": "allowed_tools", "mode": "maybe", "tools": []}),
        400,
        "tool_choice.mode",
        "invalid_value",
    ),
    (
        "hosted tool",
        body(tools=[{"type": "image_generation"}]),
        400,
        "tools[0].type",
        "unsupported_tool_type",
    ),
    ("unknown include", body(include=["everything"]), 400, "include", "invalid_value"),
    # input items: param points at the item (and into it)
    (
        "unknown item type",
        body(input=[user("a"), {"type": "bogus"}]),
        400,
        "input[1]",
        "invalid_value",
    ),
    ("item not an object", body(input=[user("a"), "b"]), 400, "input[1]", "invalid_value"),
    (
        "message without a role",
        body(input=[user("a"), {"type": "message", "content": "b"}]),
        400,
        "input[1].role",
        "missing_required_parameter",
    ),
    (
        "message with an unknown role",
        body(input=[{"role": "robot", "content": "a"}]),
        400,
        "input[0].role",
        "invalid_value",
    ),
    (
        "content part of an unknown type",
        body(input=[{"role": "user", "content": [{"type": "input_text", "text": "a"}, {}]}]),
        400,
        "input[0].content[1]",
        "invalid_value",
    ),
    (
        "input_text part without text",
        body(input=[user("a"), {"role": "user", "content": [{"type": "input_text"}]}]),
        400,
        "input[1].content[0].text",
        "missing_required_parameter",
    ),
    (
        "function_call_output without call_id",
        body(input=[user("a"), {"type": "function_call_output", "output": "42"}]),
        400,
        "input[1].call_id",
        "missing_required_parameter",
    ),
    (
        "function_call without a name",
        body(input=[{"type": "function_call", "call_id": "call_1", "arguments": "{}"}]),
        400,
        "input[0].name",
        "missing_required_parameter",
    ),
    (
        "unknown item_reference",
        body(input=[user("a"), {"type": "item_reference", "id": "msg_missing"}]),
        404,
        "input[1].id",
        None,
    ),
    (
        "json_schema format without a name",
        body(text={"format": {"type": "json_schema", "schema": {"type": "object"}}}),
        400,
        "text.format.name",
        "missing_required_parameter",
    ),
    ("unknown conversation", body(conversation="conv_1"), 404, "conversation", None),
    (
        "unknown conversation by object",
        body(conversation={"id": "conv_missing"}),
        404,
        "conversation",
        None,
    ),
    ("malformed conversation id", body(conversation="c1"), 400, "conversation", "invalid_value"),
    ("background without store", body(background=True, store=False), 400, "background", None),
]


@pytest.mark.parametrize(
    ("payload", "status", "param", "code"),
    [case[1:] for case in BODY_CASES],
    ids=[case[0] for case in BODY_CASES],
)
async def test_create_errors(
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    payload: bytes | dict[str, Any],
    status: int,
    param: str | None,
    code: str | None,
) -> None:
    if isinstance(payload, bytes):
        headers = {"content-type": "application/json"}
        reply = await http.post("/responses", content=payload, headers=headers)
    else:
        reply = await http.post("/responses", json=payload)

    error = the_error(reply, status)
    assert error["type"] == "invalid_request_error"
    assert (error["param"], error["code"]) == (param, code)
    assert backend.requests == []  # refused before any model call
    stored = (await http.get("/responses")).json()
    assert stored["data"] == []  # and nothing was written


@pytest.mark.parametrize(
    "fields",
    [
        {"temperature": 0},
        {"temperature": 2},
        {"top_p": 0},
        {"top_p": 1},
        {"max_output_tokens": 16},
        {"max_tool_calls": 1},
        {"top_logprobs": 0},
        {"top_logprobs": 20},
        {"metadata": {f"{i:02d}" + "k" * 62: "v" * 512 for i in range(16)}},
    ],
    ids=lambda fields: "-".join(f"{k}={str(v)[:8]}" for k, v in fields.items()),
)
async def test_limits_themselves_are_accepted(
    http: httpx2.AsyncClient, fields: dict[str, Any]
) -> None:
    reply = await http.post("/responses", json=body(**fields))

    assert reply.status_code == 200, reply.text
    assert reply.json()["status"] == "completed"


# --- routing and the read endpoints --------------------------------------------------------------

# (method, path, status, param, code)
ROUTE_CASES: list[tuple[str, str, int, str | None, str | None]] = [
    ("GET", "/nowhere", 404, None, "not_found"),
    ("POST", "/responses/resp_1/nowhere", 404, None, "not_found"),
    ("PUT", "/responses", 405, None, "method_not_allowed"),
    ("PATCH", "/responses/resp_1", 405, None, "method_not_allowed"),
    ("POST", "/models", 405, None, "method_not_allowed"),
    ("GET", "/responses/resp_missing", 404, "response_id", None),
    ("DELETE", "/responses/resp_missing", 404, "response_id", None),
    ("GET", "/responses/resp_missing/input_items", 404, "response_id", None),
    ("POST", "/responses/resp_missing/cancel", 404, "response_id", None),
    ("GET", "/models/no-such-model", 404, "model", "model_not_found"),
    ("GET", "/responses?limit=0", 400, "limit", "invalid_value"),
    ("GET", "/responses?limit=101", 400, "limit", "invalid_value"),
    ("GET", "/responses?limit=-1", 400, "limit", "invalid_value"),
    ("GET", "/responses?limit=ten", 400, "limit", "invalid_value"),
    ("GET", "/responses?order=up", 400, "order", "invalid_value"),
    ("GET", "/responses?after=resp_missing", 404, "after", None),
]


@pytest.mark.parametrize(
    ("method", "path", "status", "param", "code"),
    ROUTE_CASES,
    ids=[f"{case[0]} {case[1]}" for case in ROUTE_CASES],
)
async def test_route_errors(
    http: httpx2.AsyncClient,
    method: str,
    path: str,
    status: int,
    param: str | None,
    code: str | None,
) -> None:
    reply = await http.request(method, path)

    error = the_error(reply, status)
    assert error["type"] == "invalid_request_error"
    assert (error["param"], error["code"]) == (param, code)


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/responses", {"GET", "POST"}),
        ("PATCH", "/responses/resp_1", {"GET", "DELETE"}),
        ("DELETE", "/models", {"GET"}),
    ],
)
async def test_405_names_every_allowed_method(
    http: httpx2.AsyncClient, method: str, path: str, allowed: set[str]
) -> None:
    reply = await http.request(method, path)

    assert reply.status_code == 405
    named = {m.strip() for m in reply.headers["allow"].split(",")} - {"HEAD"}
    assert named == allowed


@pytest.fixture
async def stored_id(http: httpx2.AsyncClient) -> str:
    reply = await http.post("/responses", json=body(input=[user("a"), user("b")]))
    assert reply.status_code == 200, reply.text
    response_id: str = reply.json()["id"]
    return response_id


@pytest.mark.parametrize(
    ("suffix", "query", "status", "param"),
    [
        ("", "stream=true", 400, "response_id"),  # not a background response
        ("", "include=everything", 400, "include"),
        ("/cancel", "", 400, "response_id"),
        ("/input_items", "limit=0", 400, "limit"),
        ("/input_items", "limit=101", 400, "limit"),
        ("/input_items", "order=sideways", 400, "order"),
        ("/input_items", "include=everything", 400, "include"),
        ("/input_items", "after=msg_missing", 404, "after"),
        ("/input_items", "before=msg_missing", 404, "before"),
    ],
)
async def test_errors_about_a_stored_response(
    http: httpx2.AsyncClient, stored_id: str, suffix: str, query: str, status: int, param: str
) -> None:
    method = "POST" if suffix == "/cancel" else "GET"

    reply = await http.request(method, f"/responses/{stored_id}{suffix}?{query}")

    error = the_error(reply, status)
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param


# --- the body size limit ---------------------------------------------------------------------


@pytest.fixture
async def small(backend: FakeBackend, database_url: str) -> AsyncIterator[httpx2.AsyncClient]:
    """A raw client on an app that accepts request bodies of at most ``SMALL_LIMIT`` bytes."""
    settings = make_settings(backend, database_url, max_body_bytes=SMALL_LIMIT)
    async with running(create_app(settings)) as app:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url=BASE_URL) as raw:
            yield raw


def json_of_size(size: int) -> bytes:
    head = b'{"model": "' + MODEL.encode() + b'", "input": "'
    raw = head + b"x" * (size - len(head) - 2) + b'"}'
    assert len(raw) == size
    return raw


async def test_a_body_at_the_limit_is_accepted(small: httpx2.AsyncClient) -> None:
    reply = await small.post(
        "/responses",
        content=json_of_size(SMALL_LIMIT),
        headers={"content-type": "application/json"},
    )

    assert reply.status_code == 200, reply.text


async def test_a_body_over_the_limit_is_a_413(
    small: httpx2.AsyncClient, backend: FakeBackend
) -> None:
    reply = await small.post(
        "/responses",
        content=json_of_size(SMALL_LIMIT + 1),
        headers={"content-type": "application/json"},
    )

    error = the_error(reply, 413)
    assert error["type"] == "invalid_request_error"
    assert error["code"] == "request_too_large"
    assert backend.requests == []


async def test_a_chunked_body_over_the_limit_is_a_413(small: httpx2.AsyncClient) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"model": "' + MODEL.encode() + b'", "input": "'
        for _ in range(8):
            yield b"x" * 200  # no content-length: the limit is counted while reading
        yield b'"}'

    reply = await small.post(
        "/responses", content=chunks(), headers={"content-type": "application/json"}
    )

    assert "content-length" not in reply.request.headers
    assert the_error(reply, 413)["code"] == "request_too_large"


async def test_the_sdk_raises_a_status_error_for_413(small: httpx2.AsyncClient) -> None:
    async with openai.AsyncOpenAI(
        base_url=BASE_URL, api_key="unused", http_client=small, max_retries=0
    ) as sdk:
        with pytest.raises(openai.APIStatusError) as caught:
            await sdk.responses.create(model=MODEL, input="x" * 2 * SMALL_LIMIT)

    assert caught.value.status_code == 413
    assert caught.value.code == "request_too_large"


# --- through the SDK ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "exception", "param", "code"),
    [
        ({"model": "no-such-model"}, openai.NotFoundError, "model", "model_not_found"),
        ({"temperature": 3}, openai.BadRequestError, "temperature", "invalid_value"),
        ({"metadata": {"k": "v" * 513}}, openai.BadRequestError, "metadata", "invalid_value"),
        (
            {"previous_response_id": "resp_missing"},
            openai.NotFoundError,
            "previous_response_id",
            "previous_response_not_found",
        ),
        (
            {"input": [{"type": "bogus"}]},
            openai.BadRequestError,
            "input[0]",
            "invalid_value",
        ),
    ],
    ids=["unknown model", "temperature", "metadata", "previous response", "input item"],
)
async def test_create_raises_the_matching_sdk_exception(
    client: openai.AsyncOpenAI,
    fields: dict[str, Any],
    exception: type[openai.APIStatusError],
    param: str,
    code: str,
) -> None:
    with pytest.raises(openai.APIStatusError) as caught:
        await client.responses.create(**{**body(), **fields})

    assert type(caught.value) is exception
    assert caught.value.type == "invalid_request_error"
    assert (caught.value.param, caught.value.code) == (param, code)


async def test_read_endpoints_raise_the_matching_sdk_exception(
    client: openai.AsyncOpenAI, stored_id: str
) -> None:
    with pytest.raises(openai.NotFoundError):
        await client.responses.retrieve("resp_missing")
    with pytest.raises(openai.NotFoundError):
        await client.responses.delete("resp_missing")
    with pytest.raises(openai.NotFoundError):
        await client.responses.input_items.list("resp_missing")
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.input_items.list(stored_id, limit=101)
    assert caught.value.param == "limit"
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.cancel(stored_id)
    assert caught.value.param == "response_id"


async def test_a_wrong_method_is_a_status_error_in_the_sdk(client: openai.AsyncOpenAI) -> None:
    with pytest.raises(openai.APIStatusError) as caught:
        await client.put("/responses", cast_to=object)

    assert caught.value.status_code == 405
    assert caught.value.code == "method_not_allowed"
