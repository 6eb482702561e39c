"""Every error leaves in OpenAI's envelope with the right status, type, param and code."""

from __future__ import annotations

from typing import Any

import httpx2
import openai
import pytest

from agentloom.config import Settings
from agentloom.inference.scripted import ScriptedModel
from agentloom.server.app import create_app
from agentloom.server.body import declared_over
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import BASE_URL, make_settings, running

MODEL = "fake-model"


def envelope(reply: httpx2.Response) -> dict[str, Any]:
    body = reply.json()
    assert set(body) == {"error"}, body
    error: dict[str, Any] = body["error"]
    assert set(error) == {"message", "type", "param", "code"}, error
    assert isinstance(error["message"], str)
    assert error["message"]
    return error


# (what is wrong, request body, status, param, code)
INVALID_BODIES: list[tuple[str, dict[str, Any], int, str | None, str | None]] = [
    ("missing model", {"input": "hi"}, 400, "model", None),
    ("unknown model", {"model": "nope", "input": "hi"}, 404, "model", "model_not_found"),
    (
        "temperature too high",
        {"model": MODEL, "input": "x", "temperature": 2.5},
        400,
        "temperature",
        None,
    ),
    (
        "temperature negative",
        {"model": MODEL, "input": "x", "temperature": -0.1},
        400,
        "temperature",
        None,
    ),
    ("top_p above 1", {"model": MODEL, "input": "x", "top_p": 1.5}, 400, "top_p", None),
    (
        "max_output_tokens 0",
        {"model": MODEL, "input": "x", "max_output_tokens": 0},
        400,
        "max_output_tokens",
        None,
    ),
    (
        "max_tool_calls 0",
        {"model": MODEL, "input": "x", "max_tool_calls": 0},
        400,
        "max_tool_calls",
        None,
    ),
    (
        "top_logprobs 21",
        {"model": MODEL, "input": "x", "top_logprobs": 21},
        400,
        "top_logprobs",
        None,
    ),
    (
        "17 metadata pairs",
        {"model": MODEL, "input": "x", "metadata": {f"k{i}": "v" for i in range(17)}},
        400,
        "metadata",
        None,
    ),
    (
        "metadata key of 65",
        {"model": MODEL, "input": "x", "metadata": {"k" * 65: "v"}},
        400,
        "metadata",
        None,
    ),
    (
        "metadata value of 513",
        {"model": MODEL, "input": "x", "metadata": {"k": "v" * 513}},
        400,
        "metadata",
        None,
    ),
    (
        "unknown previous response",
        {"model": MODEL, "input": "x", "previous_response_id": "resp_missing"},
        404,
        "previous_response_id",
        "previous_response_not_found",
    ),
    (
        "conversation with previous_response_id",
        {"model": MODEL, "input": "x", "conversation": "conv_1", "previous_response_id": "resp_1"},
        400,
        None,
        None,
    ),
    (
        "tool_choice naming no tool",
        {"model": MODEL, "input": "x", "tool_choice": {"type": "function", "name": "ghost"}},
        400,
        "tool_choice",
        None,
    ),
    (
        "unknown input item type",
        {
            "model": MODEL,
            "input": [{"type": "message", "role": "user", "content": "a"}, {"type": "bogus"}],
        },
        400,
        "input[1]",
        None,
    ),
    ("input not a string or list", {"model": MODEL, "input": 42}, 400, "input", None),
]


@pytest.mark.parametrize(
    ("body", "status", "param", "code"),
    [case[1:] for case in INVALID_BODIES],
    ids=[case[0] for case in INVALID_BODIES],
)
async def test_invalid_requests(
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    body: dict[str, Any],
    status: int,
    param: str | None,
    code: str | None,
) -> None:
    reply = await http.post("/responses", json=body)

    assert reply.status_code == status, reply.text
    error = envelope(reply)
    assert error["type"] == "invalid_request_error"
    if param is not None:
        assert error["param"] is not None
        assert error["param"].startswith(param), error
    if code is not None:
        assert error["code"] == code
    assert backend.requests == []  # refused before any model call


@pytest.mark.parametrize(
    ("raw", "what"),
    [(b"{not json", "malformed JSON"), (b"[1, 2]", "not an object"), (b"", "empty")],
)
async def test_bodies_that_are_not_json_objects(
    http: httpx2.AsyncClient, raw: bytes, what: str
) -> None:
    reply = await http.post("/responses", content=raw, headers={"content-type": "application/json"})

    assert reply.status_code == 400, what
    assert envelope(reply)["type"] == "invalid_request_error"


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/nowhere", 404),
        ("POST", "/models", 405),
        ("PUT", "/responses", 405),
        ("GET", "/responses/resp_missing", 404),
        ("DELETE", "/responses/resp_missing", 404),
        ("GET", "/responses/resp_missing/input_items", 404),
        ("GET", "/models/nope", 404),
    ],
)
async def test_routing_errors(
    http: httpx2.AsyncClient, method: str, path: str, status: int
) -> None:
    reply = await http.request(method, path)

    assert reply.status_code == status
    envelope(reply)


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("limit=x", "limit"),
        ("limit=%C2%B2", "limit"),  # '²': a digit to str.isdigit, not to int
        ("limit=" + "9" * 5000, "limit"),  # more digits than int() reads
        ("order=up", "order"),
    ],
)
async def test_bad_list_parameters(
    http: httpx2.AsyncClient,
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    query: str,
    param: str,
) -> None:
    scripted.add_turn("ok")
    response = await client.responses.create(model=backend.model, input="hi")

    for path in (f"/responses/{response.id}/input_items?{query}", f"/responses?{query}"):
        reply = await http.get(path)
        assert reply.status_code == 400, (path, reply.text)
        assert envelope(reply)["param"] == param


@pytest.mark.parametrize(
    ("path", "param"),
    [
        # found by Schemathesis: OverflowError from SQLite, a 500
        (
            "/organization/audit_logs?effective_at[lte]=5788678483508081228513280",
            "effective_at[lte]",
        ),
        ("/organization/audit_logs?effective_at[gte]=%C2%B2", "effective_at[gte]"),
        ("/organization/usage/completions?start_time=99999999999999999999", "start_time"),
        ("/organization/usage/completions?start_time=0&page=%C2%B2", "page"),
        ("/responses/resp_x?stream=true&starting_after=99999999999999999999", "starting_after"),
        ("/responses/resp_x?stream=true&starting_after=%C2%B2", "starting_after"),
        # a 500 on PostgreSQL, whose event numbers are 32-bit (see the test below)
        ("/responses/resp_x?stream=true&starting_after=2147483648", "starting_after"),
    ],
)
async def test_numbers_out_of_a_columns_range_are_400s(
    http: httpx2.AsyncClient, path: str, param: str
) -> None:
    reply = await http.get(path)

    assert reply.status_code == 400, reply.text
    assert envelope(reply)["param"] == param


@pytest.mark.both_databases
async def test_a_followers_event_number_past_32_bits_is_a_400(
    http: httpx2.AsyncClient, scripted: ScriptedModel
) -> None:
    scripted.add_turn("ok")
    body = {"model": MODEL, "input": "hi", "background": True}
    started = (await http.post("/responses", json=body)).json()
    path = f"/responses/{started['id']}?stream=true&starting_after="

    largest = await http.get(path + str(2**31 - 1))
    past = await http.get(path + str(2**31))  # PostgreSQL: "value out of int32 range", a 500

    assert largest.status_code == 200, largest.text
    assert past.status_code == 400, past.text
    assert envelope(past)["param"] == "starting_after"


BIG = 10**400  # past any column, and past a double


@pytest.mark.both_databases
@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        # each a 500: OverflowError on its way to a column of seconds
        ("/organization/admin_api_keys", {"name": "k", "expires_in_seconds": BIG}, None),
        ("/organization/admin_api_keys", {"name": "k", "expires_in_seconds": 2**31}, None),
        ("/managed-agents", {"config": {"schedule": {"type": "interval", "every": BIG}}}, None),
        ("/managed-agents", {"config": {"schedule_type": "interval", "schedule_value": BIG}}, None),
        ("/responses", {"model": MODEL, "input": "hi", "max_output_tokens": 2**31}, None),
        ("/embeddings", {"model": MODEL, "input": [[2**31]]}, "input[0][0]"),
    ],
    ids=["expiry", "expiry-32", "every", "schedule_value", "max_output_tokens", "token"],
)
async def test_integers_past_what_stores_them_are_400s_naming_them(
    http: httpx2.AsyncClient, path: str, body: dict[str, Any], param: str | None
) -> None:
    if path == "/managed-agents":
        body = {"name": "a", "agent_type": "simple", **body}
    named = param or ".".join(_leaf(body))

    reply = await http.post(path, json=body)

    assert reply.status_code == 400, reply.text
    error = envelope(reply)
    assert (error["type"], error["param"]) == ("invalid_request_error", named)


def _leaf(body: dict[str, Any]) -> list[str]:
    """The path of the one integer of ``body`` past 31 bits."""
    for key, value in body.items():
        if isinstance(value, dict):
            below = _leaf(value)
            if below:
                return [key, *below]
        elif isinstance(value, int) and not isinstance(value, bool) and value >= 2**31:
            return [key]
    return []


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        # found by Schemathesis on PostgreSQL, whose text holds no NUL: a 500
        ("GET", "/responses?model=a%00b", None),
        ("POST", "/organization/projects", {"name": "a\u0000b"}),
        ("POST", "/organization/admin_api_keys", {"name": "\u0000"}),
        ("GET", "/organization/usage/completions?start_time=0&project_ids=%00", None),
    ],
)
async def test_text_with_a_nul_character_is_never_a_500(
    http: httpx2.AsyncClient, database_url: str, method: str, path: str, body: Any
) -> None:
    reply = await http.request(method, path, json=body)

    if database_url.startswith("postgresql"):
        assert reply.status_code == 400, reply.text
        assert envelope(reply)["code"] == "invalid_value"
        assert "NUL" in envelope(reply)["message"]
    else:  # SQLite stores it
        assert reply.status_code < 500, reply.text


@pytest.mark.parametrize(
    ("declared", "over"),
    [
        ("10", False),
        ("11", True),
        (" 11 ", True),
        ("\u00b2", False),
        ("9" * 5000, True),
        ("", False),
    ],
)
def test_a_declared_content_length_is_read_safely(declared: str, over: bool) -> None:
    assert declared_over(declared, 10) is over


async def test_a_body_over_the_limit_is_a_413(backend: FakeBackend, database_url: str) -> None:
    settings: Settings = make_settings(backend, database_url, max_body_bytes=2048)
    async with running(create_app(settings)) as app:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url=BASE_URL) as http:
            reply = await http.post("/responses", json={"model": MODEL, "input": "x" * 4096})

    assert reply.status_code == 413
    assert envelope(reply)["code"] == "request_too_large"


@pytest.mark.parametrize(
    ("kwargs", "exception"),
    [
        ({"model": "nope"}, openai.NotFoundError),
        ({"model": MODEL, "temperature": 3}, openai.BadRequestError),
        ({"model": MODEL, "previous_response_id": "resp_x"}, openai.NotFoundError),
    ],
)
async def test_the_sdk_raises_its_matching_exception(
    client: openai.AsyncOpenAI, kwargs: dict[str, Any], exception: type[openai.APIStatusError]
) -> None:
    with pytest.raises(exception) as caught:
        await client.responses.create(input="hi", **kwargs)

    assert caught.value.body is not None
