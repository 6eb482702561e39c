"""Helpers for the vector store tests: uploads, apps of their own, a gated embedder, and direct
looks at the tables."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

import httpx2
import numpy as np
import openai
import sqlalchemy as sa
from numpy.typing import NDArray
from sqlalchemy.engine import Connection
from starlette.applications import Starlette

from agentloom.config import Settings
from agentloom.retrieval.embeddings import Embedder
from agentloom.server.app import create_app
from agentloom.server.runtime import Runtime
from agentloom.storage import schema
from tests.plugins.server import BASE_URL, running

WAIT = 20.0  # seconds before a wait for the server gives up (a hang fails, never passes)


async def upload(client: openai.AsyncOpenAI, name: str, content: str | bytes) -> str:
    data = content.encode() if isinstance(content, str) else content
    created = await client.files.create(file=(name, data), purpose="assistants")
    return created.id


def runtime(app: Starlette) -> Runtime:
    found: Runtime = app.state.runtime
    return found


async def count(app: Starlette, table: sa.Table, **where: str) -> int:
    """Rows of ``table`` whose columns equal ``where``."""

    def read(conn: Connection) -> int:
        query = sa.select(sa.func.count()).select_from(table)
        for column, value in where.items():
            query = query.where(table.c[column] == value)
        return int(conn.scalar(query) or 0)

    return await runtime(app).database.runner.read(read)


async def chunks(app: Starlette, **where: str) -> int:
    return await count(app, schema.vector_store_chunks, **where)


async def execute(app: Starlette, statement: sa.Executable) -> None:
    def write(conn: Connection) -> None:
        conn.execute(statement)

    await runtime(app).database.runner.write(write)


async def wait_until(check: Callable[[], Awaitable[bool]], *, every: float = 0.02) -> None:
    for _ in range(int(WAIT / every)):
        if await check():
            return
        await asyncio.sleep(every)
    raise TimeoutError(f"still waiting after {WAIT} seconds")


@asynccontextmanager
async def serving(
    settings: Settings, *, embedder: Embedder | None = None
) -> AsyncIterator[tuple[Starlette, openai.AsyncOpenAI]]:
    """An app of its own (its lifespan running) and an SDK client talking to it."""
    async with running(create_app(settings, embedder=embedder)) as app:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url=BASE_URL) as raw:
            sdk = openai.AsyncOpenAI(
                base_url=BASE_URL, api_key="unused", http_client=raw, max_retries=0
            )
            yield app, sdk


@dataclass
class GatedEmbedder:
    """The real embedder, except that ``embed`` waits until the gate opens (to catch files in
    the middle of their ingestion). The first ``passes`` calls go through without waiting."""

    inner: Embedder
    gate: asyncio.Event
    entered: asyncio.Event
    passes: int = 0

    @classmethod
    async def around(cls, inner: Embedder) -> GatedEmbedder:
        """Gate ``inner``, once it has answered (an embedder may learn its dimensions so)."""
        await inner.embed(["warm up"])
        return cls(inner, asyncio.Event(), asyncio.Event())

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    async def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if self.passes > 0:
            self.passes -= 1
            return await self.inner.embed(texts)
        self.entered.set()
        await self.gate.wait()
        return await self.inner.embed(texts)

    async def prepare(self) -> None:
        await self.inner.prepare()

    async def aclose(self) -> None:
        await self.inner.aclose()
