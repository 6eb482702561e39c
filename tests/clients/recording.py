"""An ASGI wrapper that records what real clients sent to agentloom and what they got back.

The clients are other processes, so their requests are captured at the server: each HTTP
exchange keeps the method, path, status, request body and response body (streamed bodies
whole, once the response is over).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send


@dataclass
class Exchange:
    """One HTTP request to the app and the answer it got."""

    method: str
    path: str
    status: int = 0
    request: bytearray = field(default_factory=bytearray)
    response: bytearray = field(default_factory=bytearray)

    def json(self) -> dict[str, Any]:
        """The request body as JSON (the clients here send JSON objects)."""
        body: dict[str, Any] = json.loads(self.request)
        return body

    def describe(self) -> str:
        """What failed, for an assertion message: the status and agentloom's answer."""
        return f"{self.method} {self.path} -> {self.status}: {self.response[:2000].decode()}"


class Recorder:
    """Wraps an ASGI app; ``exchanges`` lists every HTTP exchange in arrival order."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.exchanges: list[Exchange] = []

    def posts(self, suffix: str = "/responses") -> list[Exchange]:
        """The POST exchanges whose path ends with ``suffix``."""
        return [e for e in self.exchanges if e.method == "POST" and e.path.endswith(suffix)]

    def failures(self) -> list[Exchange]:
        return [e for e in self.exchanges if e.status >= 400]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        exchange = Exchange(method=scope["method"], path=scope["path"])
        self.exchanges.append(exchange)

        async def receive_recorded() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                exchange.request += message.get("body", b"")
            return message

        async def send_recorded(message: Message) -> None:
            if message["type"] == "http.response.start":
                exchange.status = message["status"]
            elif message["type"] == "http.response.body":
                exchange.response += message.get("body", b"")
            await send(message)

        await self.app(scope, receive_recorded, send_recorded)
