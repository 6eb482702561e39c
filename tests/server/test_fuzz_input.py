"""Property-based tests (Hypothesis) over the request parser and the main routes: arbitrary JSON
values, valid requests with one field replaced by anything, deep nesting, huge strings and odd
unicode. Whatever arrives, the answer is a 2xx or a 4xx in OpenAI's envelope within seconds:
never a 5xx, never a hang. Budgets are fixed in examples, so CI time stays bounded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentloom.config import Settings
from agentloom.server.app import create_app
from agentloom.server.errors import DIALECTS
from agentloom.server.spec import ApiRoute
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import audited_client, make_settings

Send = Callable[[str, str, bytes], tuple[int, bytes]]
HANG_GUARD = 10.0  # seconds any one request may take
FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

ROUTES = [
    "/responses",
    "/responses/input_tokens",
    "/responses/compact",
    "/chat/completions",
    "/completions",
    "/messages",
    "/messages/count_tokens",
    "/embeddings",
    "/conversations",
    "/vector_stores",
    "/prompts",
    "/moderations",
]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=12), children, max_size=5)
    ),
    max_leaves=30,
)
odd_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), min_codepoint=0), max_size=200
)


async def _send(
    client: httpx2.AsyncClient, method: str, path: str, body: bytes
) -> tuple[int, bytes]:
    with anyio.fail_after(HANG_GUARD):
        reply = await client.request(method, path, content=body)
    return reply.status_code, reply.content


@pytest.fixture
def send(backend: FakeBackend, tmp_path: Path) -> Iterator[Send]:
    """A synchronous sender to the app running in a portal's event loop (Hypothesis drives
    synchronous tests)."""
    config = make_settings(backend, f"sqlite:///{tmp_path / 'fuzz.db'}")
    with (
        anyio.from_thread.start_blocking_portal() as portal,
        portal.wrap_async_context_manager(audited_client(config)) as client,
    ):
        yield lambda method, path, body: portal.call(_send, client, method, path, body)


def _answered(status: int, body: bytes, path: str = "") -> None:
    """A success, or a client error in its API's envelope (OpenAI's; Anthropic's on the
    Messages API): never a server error."""
    assert status < 500, body[:500]
    if status >= 400:
        answer = json.loads(body)
        error = answer["error"]
        if f"/v1{path}" in DIALECTS:
            assert answer["type"] == "error"
            assert set(error) == {"message", "type"}
        else:
            assert set(error) == {"message", "type", "param", "code"}
        assert isinstance(error["message"], str)
        assert error["message"]


@FUZZ
@given(path=st.sampled_from(ROUTES), value=json_values)
def test_any_json_value_gets_an_answer(send: Send, path: str, value: Any) -> None:
    _answered(*send("POST", path, json.dumps(value).encode()), path)


@FUZZ
@given(path=st.sampled_from(ROUTES), raw=st.binary(max_size=300))
def test_any_bytes_get_an_answer(send: Send, path: str, raw: bytes) -> None:
    _answered(*send("POST", path, raw), path)


def _json_bodies() -> list[tuple[str, list[str]]]:
    """Every POST with a JSON body and no path parameter, with its model's field names (from
    the routes' OpenAPI entries)."""
    routes = create_app(Settings()).routes
    return [
        (
            route.path.removeprefix("/v1"),
            sorted(f.alias or n for n, f in op.body.model_fields.items()),
        )
        for route in routes
        if isinstance(route, ApiRoute) and "{" not in route.path
        for method, op in route.operations.items()
        if method == "POST" and op.body is not None
    ]


BODIES = _json_bodies()


@FUZZ
@given(data=st.data())
def test_any_fields_of_any_json_body(send: Send, data: st.DataObject) -> None:
    path, names = data.draw(st.sampled_from(BODIES))
    body = data.draw(st.dictionaries(st.sampled_from(names), json_values, max_size=4))
    _answered(*send("POST", path, json.dumps(body).encode()), path)


@FUZZ
@given(
    field=st.sampled_from(
        [
            "model",
            "input",
            "instructions",
            "tools",
            "tool_choice",
            "metadata",
            "text",
            "reasoning",
            "include",
            "max_output_tokens",
            "previous_response_id",
            "conversation",
            "truncation",
            "temperature",
            "prompt",
            "store",
            "stream",
            "context_management",
            "moderation",
        ]
    ),
    value=json_values,
)
def test_a_valid_request_with_any_field_replaced(
    send: Send, backend: FakeBackend, field: str, value: Any
) -> None:
    body = {"model": backend.model, "input": "hi", field: value}
    _answered(*send("POST", "/responses", json.dumps(body).encode()))


@FUZZ
@given(
    kind=st.sampled_from(
        [
            "message",
            "function_call",
            "function_call_output",
            "reasoning",
            "custom_tool_call",
            "mcp_call",
            "compaction",
            "item_reference",
        ]
    ),
    extra=st.dictionaries(
        st.sampled_from(
            ["content", "id", "call_id", "output", "role", "arguments", "name", "status", "summary"]
        ),
        json_values,
        max_size=4,
    ),
)
def test_any_input_item(send: Send, backend: FakeBackend, kind: str, extra: dict[str, Any]) -> None:
    body = {"model": backend.model, "input": [{"type": kind, **extra}]}
    _answered(*send("POST", "/responses", json.dumps(body).encode()))


@FUZZ
@given(depth=st.integers(min_value=1, max_value=5_000), path=st.sampled_from(ROUTES))
def test_any_nesting_depth(send: Send, depth: int, path: str) -> None:
    body = '{"metadata": ' + "[" * depth + "]" * depth + "}"
    status, reply = send("POST", path, body.encode())
    _answered(status, reply, path)
    if depth > 128 and f"/v1{path}" in DIALECTS:  # Anthropic's envelope has no code
        assert json.loads(reply)["error"]["type"] == "invalid_request_error"
    elif depth > 128:
        assert json.loads(reply)["error"]["code"] == "json_too_deep"


@settings(FUZZ, max_examples=10)
@given(size=st.integers(min_value=100_000, max_value=900_000), char=odd_text.filter(bool))
def test_huge_strings(send: Send, backend: FakeBackend, size: int, char: str) -> None:
    text = (char * (size // len(char) + 1))[:size]
    for body in (
        {"model": backend.model, "input": text, "store": False},
        {"model": backend.model, "input": "hi", "metadata": {"k": text}},
        {"model": text},
    ):
        _answered(*send("POST", "/responses", json.dumps(body).encode()))


@FUZZ
@given(text=odd_text, raw=st.binary(max_size=200))
def test_odd_unicode_and_bytes(send: Send, backend: FakeBackend, text: str, raw: bytes) -> None:
    body = {"model": backend.model, "input": text or "x", "instructions": text, "store": False}
    _answered(*send("POST", "/responses", json.dumps(body, ensure_ascii=False).encode()))
    _answered(*send("POST", "/responses", raw))
    _answered(*send("POST", "/conversations", raw))
