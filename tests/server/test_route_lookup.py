"""The indexed router (:class:`agentloom.server.routing.IndexedRouter`) answers every request as
Starlette's own router does: the same route, 405, 404, slash redirect, mount and WebSocket."""

from __future__ import annotations

import re
from collections.abc import Sequence

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route, Router, WebSocketRoute
from starlette.testclient import TestClient
from starlette.websockets import WebSocket

from agentloom.config import Settings
from agentloom.server.app import create_app
from agentloom.server.routing import IndexedRouter


def _named(name: str) -> object:
    async def endpoint(request: Request) -> Response:
        return PlainTextResponse(f"{name} {dict(request.path_params)}")

    return endpoint


async def _socket(websocket: WebSocket) -> None:
    await websocket.accept()
    await websocket.send_text("socket")
    await websocket.close()


ROUTES: Sequence[BaseRoute] = [
    Route("/v1/files", _named("files"), methods=["GET", "POST"]),  # type: ignore[arg-type]
    Route("/v1/files/{file_id}", _named("file"), methods=["GET"]),  # type: ignore[arg-type]
    Route("/v1/{kind}/special", _named("any kind"), methods=["GET"]),  # type: ignore[arg-type]
    Route("/v1/files/{file_id}", _named("file delete"), methods=["DELETE"]),  # type: ignore[arg-type]
    Mount("/static", routes=[Route("/{name}", _named("static"))]),  # type: ignore[arg-type]
    Route("/v1/models/", _named("models slash")),  # type: ignore[arg-type]
    Route("/", _named("root")),  # type: ignore[arg-type]
    WebSocketRoute("/v1/socket", _socket),
]

REQUESTS = [
    ("GET", "/v1/files"),
    ("POST", "/v1/files"),
    ("PUT", "/v1/files"),
    ("GET", "/v1/files/f1"),
    ("DELETE", "/v1/files/f1"),
    ("PATCH", "/v1/files/f1"),
    ("GET", "/v1/files/special"),
    ("GET", "/v1/other/special"),
    ("GET", "/static/a.css"),
    ("GET", "/v1/models"),
    ("GET", "/v1/files/"),
    ("GET", "/"),
    ("GET", "/v1"),
    ("GET", "/nowhere/at/all"),
    ("GET", "/v1/socket"),
]


def _apps() -> tuple[Starlette, Starlette]:
    plain, indexed = Starlette(), Starlette()
    plain.router = Router(list(ROUTES))
    indexed.router = IndexedRouter(ROUTES)
    return plain, indexed


@pytest.mark.parametrize(("method", "path"), REQUESTS)
@pytest.mark.parametrize("root_path", ["", "/prefix"])
async def test_each_request_is_answered_as_starlette_answers_it(
    method: str, path: str, root_path: str
) -> None:
    answers = []
    for app in _apps():
        transport = httpx2.ASGITransport(app=app, root_path=root_path)
        async with httpx2.AsyncClient(transport=transport, base_url="http://test") as http:
            reply = await http.request(method, root_path + path, follow_redirects=False)
        answers.append(
            (
                reply.status_code,
                reply.text,
                reply.headers.get("location"),
                reply.headers.get("allow"),
            )
        )

    assert answers[0] == answers[1]
    assert answers[0][0] != 500


def test_websockets_are_routed() -> None:
    for app in _apps():
        with TestClient(app).websocket_connect("/v1/socket") as socket:
            assert socket.receive_text() == "socket"


def _echo(index: int) -> object:
    async def endpoint(scope: object, receive: object, send: object) -> None:
        await PlainTextResponse(str(index))(scope, receive, send)  # type: ignore[arg-type]

    return endpoint


def _stand_ins() -> list[BaseRoute]:
    """The app's own route table, each route answering with its position."""
    table: list[BaseRoute] = []
    for index, route in enumerate(create_app(Settings()).routes):
        if isinstance(route, Route):
            table.append(Route(route.path, _named(str(index)), methods=route.methods))  # type: ignore[arg-type]
        elif isinstance(route, Mount):
            table.append(Mount(route.path, app=_echo(index)))  # type: ignore[arg-type]
    return table


async def test_the_apps_own_table_resolves_as_starlettes() -> None:
    table = _stand_ins()
    plain, indexed = Starlette(), Starlette()
    plain.router, indexed.router = Router(table), IndexedRouter(table)
    paths = {re.sub(r"{[^}]+}", "x_1", route.path) for route in table if isinstance(route, Route)}
    for path in sorted(paths | {p + "/" for p in paths} | {"/v1/nothing", "/v1/files/x/y/z"}):
        for method in ("GET", "POST", "DELETE"):
            answers = []
            for app in (plain, indexed):
                transport = httpx2.ASGITransport(app=app)
                async with httpx2.AsyncClient(transport=transport, base_url="http://t") as http:
                    reply = await http.request(method, path, follow_redirects=False)
                answers.append(
                    (
                        reply.status_code,
                        reply.text,
                        reply.headers.get("location"),
                        reply.headers.get("allow"),
                    )
                )
            assert answers[0] == answers[1], (method, path)
