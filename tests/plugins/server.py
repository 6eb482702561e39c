"""Server fixtures: the agentloom app driven through the official ``openai`` client.

``settings`` configures one provider named ``fake`` pointed at the fake backend (real HTTP) and
the parametrised database (SQLite and PostgreSQL). ``app`` is the app with its lifespan running;
``client`` is an ``openai.AsyncOpenAI`` talking to it in-process over httpx's ASGI transport;
``http`` is a raw httpx client on the same app for what the SDK cannot send (bad JSON, wrong
methods, raw SSE).
"""

from __future__ import annotations

import asyncio
import secrets
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import openai
import pytest
from starlette.applications import Starlette

from agentloom.config import (
    DatabaseSettings,
    EmbeddingSettings,
    EngineSettings,
    FilesSettings,
    ManagedAgentSettings,
    ProviderSettings,
    ServerSettings,
    Settings,
    VectorStoreSettings,
)
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend
from tests.wire_audit import WireAudit

BASE_URL = "http://agentloom.test/v1"
FAKE_EMBEDDING_MODEL = "fake-embedding"
# seconds the fake provider's calls may wait: a test of a backend's silence sets its own (a
# short one); the default holds a slow turn (``delay(30)``) that a test cancels or kills, and a
# loaded host's pauses (2 s failed responses of tests that were waiting on nothing wrong)
BACKEND_TIMEOUT = 60.0


def make_settings(
    backend: FakeBackend,
    database_url: str,
    *,
    max_body_bytes: int = 1024 * 1024,
    max_model_calls: int = 10,
    timeout: float = BACKEND_TIMEOUT,
    files_directory: Path | None = None,
    files_max_bytes: int = 8 * 1024 * 1024,
) -> Settings:
    """Settings for one ``fake`` provider serving ``backend.model``, on ``database_url``;
    uploaded files go to ``files_directory`` (default: a fresh temporary directory), managed
    agents' folders beside it."""
    files = files_directory or _scratch_directory()
    provider = ProviderSettings(
        name="fake",
        base_url=backend.base_url,
        models=[backend.model],
        timeout=timeout,
        connect_timeout=timeout,
    )
    return Settings(
        server=ServerSettings(max_body_bytes=max_body_bytes),
        database=DatabaseSettings(url=database_url),
        engine=EngineSettings(max_model_calls=max_model_calls),
        providers=[provider],
        # the fake backend's hashed bag-of-words embeddings: fast, and texts sharing words match
        embeddings=EmbeddingSettings(
            type="openai_compatible", base_url=backend.base_url, model=FAKE_EMBEDDING_MODEL
        ),
        vector_stores=VectorStoreSettings(poll_after_ms=20),  # the SDK's *_and_poll: quick
        files=FilesSettings(directory=files, max_bytes=files_max_bytes),
        managed_agents=ManagedAgentSettings(directory=files.parent / f"{files.name}-agents"),
    )


def _scratch_directory() -> Path:
    """A directory name of its own under the system's temporary directory (created only if a
    file is uploaded)."""
    return Path(tempfile.gettempdir()) / f"agentloom-files-{secrets.token_hex(8)}"


@pytest.fixture
def settings(backend: FakeBackend, database_url: str, tmp_path: Path) -> Settings:
    return make_settings(backend, database_url, files_directory=tmp_path / "files")


@asynccontextmanager
async def running(application: Starlette) -> AsyncIterator[Starlette]:
    """Run the app's lifespan in a task of its own, as a server would.

    Fixture setup and teardown run in different tasks, and the lifespan's task group must be
    entered and exited in the same one.
    """
    started = asyncio.Event()
    stop = asyncio.Event()

    async def lifespan() -> None:
        async with application.router.lifespan_context(application):
            started.set()
            await stop.wait()

    task = asyncio.create_task(lifespan())
    waiter = asyncio.create_task(started.wait())
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    if not started.is_set():
        waiter.cancel()
        await task  # raises what the startup raised
    try:
        yield application
    finally:
        stop.set()
        await task


@asynccontextmanager
async def audited_client(config: Settings) -> AsyncIterator[httpx2.AsyncClient]:
    """A raw client on an app of its own built from ``config``, everything it sends checked
    (:mod:`tests.wire_audit`)."""
    async with running(create_app(config)) as application:
        audit = WireAudit(application)
        transport = httpx2.ASGITransport(app=audit)
        async with httpx2.AsyncClient(transport=transport, base_url=BASE_URL) as raw:
            yield raw
        assert not audit.found, "the wire format broke OpenAI's types:\n" + "\n".join(audit.found)


@pytest.fixture
async def app(settings: Settings) -> AsyncIterator[Starlette]:
    async with running(create_app(settings)) as application:
        yield application


@pytest.fixture
def wire_audit(app: Starlette) -> Iterator[WireAudit]:
    """The app behind a check of everything it sends (:mod:`tests.wire_audit`); what the check
    found fails the test."""
    audit = WireAudit(app)
    yield audit
    assert not audit.found, "the wire format broke OpenAI's types:\n" + "\n".join(audit.found)


@pytest.fixture
async def http(wire_audit: WireAudit) -> AsyncIterator[httpx2.AsyncClient]:
    transport = httpx2.ASGITransport(app=wire_audit)
    async with httpx2.AsyncClient(transport=transport, base_url=BASE_URL) as raw:
        yield raw


@pytest.fixture
async def client(http: httpx2.AsyncClient) -> AsyncIterator[openai.AsyncOpenAI]:
    async with openai.AsyncOpenAI(
        base_url=BASE_URL, api_key="unused", http_client=http, max_retries=0
    ) as sdk:
        yield sdk
