"""A fake OpenAI-compatible ``POST /v1/moderations`` over real HTTP: it flags texts containing
a marker word, with fixed scores, and records what it received; ``status``, ``delay`` and
``garbage`` make it fail."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from agentloom.testing.serving import serve

MARKER = "zorblax"  # texts containing it are flagged as violence (0.91) and harassment (0.62)
SCORES = {"violence": 0.91, "harassment": 0.62, "hate": 0.2, "sexual": 0.01}


@dataclass(frozen=True, slots=True)
class Received:
    body: dict[str, object]
    authorization: str | None


@dataclass
class FakeModerations:
    status: int = 200
    delay: float = 0.0
    garbage: bool = False
    received: list[Received] = field(default_factory=list)
    base_url: str = ""

    def reset(self) -> None:
        self.status, self.delay, self.garbage = 200, 0.0, False
        self.received.clear()

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/moderations", self._moderate, methods=["POST"])])

    async def _moderate(self, request: Request) -> Response:
        body = json.loads(await request.body())
        self.received.append(Received(body, request.headers.get("authorization")))
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.status != 200:
            return JSONResponse({"error": {"message": "boom"}}, status_code=self.status)
        if self.garbage:
            return PlainTextResponse("not json")
        return JSONResponse(_answer(str(body["input"])))


def _answer(text: str) -> dict[str, object]:
    hit = MARKER in text
    scores = {k: (v if hit else 0.0) for k, v in SCORES.items()}
    return {
        "id": "modr-fake",
        "model": "omni-moderation-latest",
        "results": [
            {
                "flagged": hit,
                "categories": {k: hit and v > 0.5 for k, v in SCORES.items()},
                "category_scores": scores,
            }
        ],
    }


@contextmanager
def serving() -> Iterator[FakeModerations]:
    """A fake served in a background thread (``base_url`` set), for a module's tests: reset it
    before each."""
    fake = FakeModerations()
    with serve(fake.app()) as base_url:
        fake.base_url = base_url
        yield fake
