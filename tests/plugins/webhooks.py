"""A webhook receiver on a real socket: it records every delivery and answers with the statuses
it is told to (then 200)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentloom.testing.serving import serve


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    answered: int


class WebhookReceiver:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self.answers: list[int] = []  # status codes to answer with, in order (then 200)
        self.base_url = ""
        self._lock = threading.Lock()
        self.app = Starlette(routes=[Route("/{path:path}", self._receive, methods=["POST"])])

    async def _receive(self, request: Request) -> Response:
        body = await request.body()
        with self._lock:
            status = self.answers.pop(0) if self.answers else 200
            self.received.append(Received(request.url.path, dict(request.headers), body, status))
        return Response(status_code=status)

    def url(self, path: str = "hook") -> str:
        return f"{self.base_url}/{path}"

    async def wait_for(self, count: int, within: float = 10.0) -> list[Received]:
        deadline = time.monotonic() + within
        while len(self.received) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(self.received)} deliveries, not {count}")
            await asyncio.sleep(0.02)
        return list(self.received)


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    hooks = WebhookReceiver()
    with serve(hooks.app) as base_url:
        hooks.base_url = base_url.removesuffix("/v1")
        yield hooks
