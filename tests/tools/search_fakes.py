"""Fake web search providers speaking Tavily's, Brave's and SearXNG's wire formats over real
HTTP, recording every request they receive."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from agentloom.testing.serving import serve_async


@dataclass(frozen=True, slots=True)
class Page:
    url: str
    title: str
    snippet: str


@dataclass(frozen=True, slots=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]
    params: dict[str, str]
    body: dict[str, object] | None


PAGES = (
    Page(
        "https://kettles.example.com/zephyr",
        "Zephyr X2 review",
        "The Zephyr X2 boils a litre in ninety seconds.",
    ),
    Page(
        "https://news.example.org/kettle-recall",
        "Kettle recall <b>2025</b>",
        "No Zephyr kettles were recalled this year.",
    ),
)


@dataclass
class FakeSearch:
    """One fake serving all three providers; ``status`` / ``garbage`` make it fail. It
    answers ``pages``, or ``per_query[q]`` for a query ``q`` listed there."""

    pages: tuple[Page, ...] = PAGES
    per_query: dict[str, tuple[Page, ...]] = field(default_factory=dict)
    status: int = 200
    garbage: bool = False
    received: list[Received] = field(default_factory=list)
    base_url: str = ""

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/search", self._search, methods=["GET", "POST"]),
                Route("/res/v1/web/search", self._brave, methods=["GET"]),
            ]
        )

    async def _record(self, request: Request) -> Received:
        raw = await request.body()
        seen = Received(
            method=request.method,
            path=request.url.path,
            headers={k.lower(): v for k, v in request.headers.items()},
            params=dict(request.query_params),
            body=json.loads(raw) if raw else None,
        )
        self.received.append(seen)
        return seen

    def _failure(self) -> Response | None:
        if self.status != 200:
            return JSONResponse({"detail": "quota exhausted"}, status_code=self.status)
        if self.garbage:
            return PlainTextResponse("<html>oops</html>")
        return None

    async def _search(self, request: Request) -> Response:
        await self._record(request)
        failed = self._failure()
        if failed is not None:
            return failed
        if request.method == "POST":  # Tavily
            query = str((self.received[-1].body or {}).get("query"))
            rows = [
                {"title": p.title, "url": p.url, "content": p.snippet, "score": 0.9}
                for p in self._pages(query)
            ]
            return JSONResponse({"query": "", "results": rows, "response_time": 0.1})
        rows = [  # SearXNG
            {"url": p.url, "title": p.title, "content": p.snippet, "engine": "fake"}
            for p in self._pages(request.query_params.get("q", ""))
        ]
        return JSONResponse({"query": request.query_params.get("q"), "results": rows})

    async def _brave(self, request: Request) -> Response:
        await self._record(request)
        failed = self._failure()
        if failed is not None:
            return failed
        rows = [
            {"type": "search_result", "title": p.title, "url": p.url, "description": p.snippet}
            for p in self._pages(request.query_params.get("q", ""))
        ]
        return JSONResponse({"type": "search", "web": {"type": "search", "results": rows}})

    def _pages(self, query: str) -> tuple[Page, ...]:
        return self.per_query.get(query, self.pages)


@asynccontextmanager
async def running_fake(fake: FakeSearch | None = None) -> AsyncIterator[FakeSearch]:
    fake = fake or FakeSearch()
    async with serve_async(fake.app()) as url:
        fake.base_url = url.removesuffix("/v1")
        yield fake
