"""End-to-end fixtures: the agentloom app served by uvicorn on a real socket.

``live_url`` is ``http://127.0.0.1:PORT/v1`` of the app built from ``settings`` (the fake
backend on both databases), with its lifespan running, on the test's event loop. ``live_client``
is the official ``openai.AsyncOpenAI`` pointed at it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import openai
import pytest

from agentloom.config import Settings
from agentloom.server.app import create_app
from agentloom.testing.backend import serve_async
from tests.plugins.server import running
from tests.wire_audit import WireAudit


@pytest.fixture
async def live_url(settings: Settings) -> AsyncIterator[str]:
    """The app's base URL over a real socket (uvicorn, lifespan run beside it), everything it
    sends checked against OpenAI's types (:mod:`tests.wire_audit`)."""
    async with running(create_app(settings)) as application:
        audit = WireAudit(application)
        async with serve_async(audit, lifespan=False) as url:
            yield url
    assert not audit.found, "the wire format broke OpenAI's types:\n" + "\n".join(audit.found)


@pytest.fixture
async def live_client(live_url: str) -> AsyncIterator[openai.AsyncOpenAI]:
    async with openai.AsyncOpenAI(
        base_url=live_url, api_key="unused", max_retries=0, timeout=10.0
    ) as sdk:
        yield sdk
