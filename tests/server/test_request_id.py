"""``x-request-id`` on every HTTP response: JSON, SSE, errors, and unhandled faults."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentloom.inference.scripted import ScriptedModel
from agentloom.server import errors
from agentloom.server.edge import EdgeMiddleware
from agentloom.server.request_id import request_id
from agentloom.testing.backend import FakeBackend

GENERATED = re.compile(r"req_[0-9a-f]{48}")


async def test_json_response_gets_a_fresh_id(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hi!")

    response = await http.post("/responses", json={"model": backend.model, "input": "Hi"})

    assert response.status_code == 200
    assert GENERATED.fullmatch(response.headers["x-request-id"])


async def test_each_request_gets_its_own_id(http: httpx2.AsyncClient) -> None:
    first = await http.get("/models")
    second = await http.get("/models")

    assert first.headers["x-request-id"] != second.headers["x-request-id"]


async def test_streamed_response_carries_the_id(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hi!")
    body = {"model": backend.model, "input": "Hi", "stream": True}

    async with http.stream("POST", "/responses", json=body) as response:
        events = [line async for line in response.aiter_lines() if line.startswith("event:")]

    assert response.headers["content-type"].startswith("text/event-stream")
    assert GENERATED.fullmatch(response.headers["x-request-id"])
    assert events[-1] == "event: response.completed"


async def test_error_response_echoes_the_clients_id(http: httpx2.AsyncClient) -> None:
    response = await http.get("/responses/resp_missing", headers={"x-request-id": "abc-123"})

    assert response.status_code == 404
    assert response.headers["x-request-id"] == "abc-123"


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ([(b"x-request-id", b"trace-1")], "trace-1"),
        ([(b"x-client-request-id", b"client:7.b")], "client:7.b"),
        ([(b"x-client-request-id", b"second"), (b"x-request-id", b"first")], "first"),
        ([(b"x-request-id", b"bad id"), (b"x-client-request-id", b"good")], "good"),
    ],
)
def test_incoming_ids_that_are_kept(headers: list[tuple[bytes, bytes]], expected: str) -> None:
    assert request_id(headers) == expected


@pytest.mark.parametrize(
    "value",
    [b"", b"has space", b"x" * 129, b"-leading-dash", b"new\nline", "caf\u00e9".encode()],
)
def test_insane_incoming_ids_are_replaced(value: bytes) -> None:
    assert GENERATED.fullmatch(request_id([(b"x-request-id", value)]))


def _explode(request: Request) -> Response:
    raise RuntimeError("a bug")


def _header_set_by_the_route(request: Request) -> Response:
    return Response("ok", headers={"X-Request-Id": "from-the-route"})


@pytest.fixture
async def small_app() -> AsyncIterator[httpx2.AsyncClient]:
    """The edge and the app's fallback error handler, around routes that misbehave."""
    app = Starlette(
        routes=[Route("/boom", _explode), Route("/own", _header_set_by_the_route)],
        middleware=[Middleware(EdgeMiddleware)],
        exception_handlers={Exception: errors.handle_unexpected},
    )
    transport = httpx2.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx2.AsyncClient(transport=transport, base_url="http://test") as http:
        yield http


async def test_unhandled_fault_still_carries_the_id(small_app: httpx2.AsyncClient) -> None:
    response = await small_app.get("/boom", headers={"x-client-request-id": "trace-500"})

    assert response.status_code == 500
    assert response.json()["error"]["type"] == "server_error"
    assert response.headers["x-request-id"] == "trace-500"


async def test_the_middleware_id_replaces_one_the_route_set(small_app: httpx2.AsyncClient) -> None:
    response = await small_app.get("/own")

    assert response.headers.get_list("x-request-id") == [response.headers["x-request-id"]]
    assert GENERATED.fullmatch(response.headers["x-request-id"])
