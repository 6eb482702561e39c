"""Fixtures for the LLM adapter's tests: a bus that records every model call, and LLMs on the
Responses path against the agentloom app (in-process, backed by the scripted model)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2
import pytest

from agentloom.bus import EventBus
from agentloom.llm import LLM, LLMCall, Path, StateMode
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import BASE_URL

MakeLLM = Callable[..., LLM]


@pytest.fixture
def bus() -> EventBus:
    return EventBus()


@pytest.fixture
def calls(bus: EventBus) -> list[LLMCall]:
    """Every :class:`LLMCall` emitted on ``bus``."""
    seen: list[LLMCall] = []
    bus.subscribe(seen.append, LLMCall)
    return seen


@pytest.fixture
async def server_llm(
    http: httpx2.AsyncClient, backend: FakeBackend, bus: EventBus
) -> AsyncIterator[MakeLLM]:
    """``server_llm(state_mode=..., encrypted_reasoning=...)``: an LLM on the Responses path
    (forced, unless ``path=None``), talking to the agentloom app (serving the scripted model)."""
    made: list[LLM] = []

    def make(
        state_mode: StateMode = "stateless", path: Path | None = "responses", **kwargs: object
    ) -> LLM:
        llm = LLM(
            backend.model,
            base_url=BASE_URL,
            http_client=http,
            path=path,
            state_mode=state_mode,
            bus=bus,
            max_retries=0,
            **kwargs,  # type: ignore[arg-type]
        )
        made.append(llm)
        return llm

    yield make
    for llm in made:
        await llm.aclose()


@pytest.fixture
def wire(http: httpx2.AsyncClient) -> list[dict[str, Any]]:
    """The JSON body of every ``POST /responses`` sent through ``http``, in order."""
    bodies: list[dict[str, Any]] = []

    async def record(request: httpx2.Request) -> None:
        if request.method == "POST" and request.url.path.endswith("/responses"):
            bodies.append(json.loads(request.content))

    http.event_hooks["request"].append(record)
    return bodies
