"""The backend's answer under its deadlines (``first_byte_timeout``, ``chunk_timeout``,
``total_timeout``): a backend that keeps sending, but too slowly in all, is ended by the total,
streamed or asked for whole, and the error names the deadline. The socket's read timeout is
long here: only the deadlines end the answer."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncGenerator, AsyncIterator

import pytest

from agentloom.errors import UpstreamTimeoutError
from agentloom.inference.base import Chunk, HTTPClientKind, TextDelta
from agentloom.inference.deadlines import StreamDeadlines, Which, Within
from agentloom.inference.deadlines import bounded as bounded_pieces
from agentloom.inference.openai_compatible import OpenAICompatibleProvider
from agentloom.inference.scripted import ScriptedModel, TurnPart, delay
from agentloom.testing.backend import FakeBackend
from tests.inference.support import ask, collect
from tests.plugins.backend import backend_config

TOTAL = 0.6  # seconds for a whole answer
WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
STEP = 0.2  # seconds between two chunks: each well within chunk_timeout, ten of them past TOTAL


@pytest.fixture
async def bounded(
    backend: FakeBackend, http_client: HTTPClientKind
) -> AsyncIterator[OpenAICompatibleProvider]:
    config = backend_config(backend, timeout=30.0, http_client=http_client)
    deadlines = StreamDeadlines(first_byte=5.0, between_chunks=5.0, total=TOTAL)
    provider = OpenAICompatibleProvider(dataclasses.replace(config, deadlines=deadlines))
    yield provider
    await provider.aclose()


def _trickle() -> list[TurnPart]:
    parts: list[TurnPart] = []
    for word in WORDS:
        parts += [f"{word} ", delay(STEP)]
    return parts


async def test_a_trickling_stream_is_ended_by_the_total(
    scripted: ScriptedModel, bounded: OpenAICompatibleProvider, backend: FakeBackend
) -> None:
    scripted.add_turn(*_trickle())
    seen: list[Chunk] = []

    async def drain() -> None:
        async for chunk in bounded.stream(ask()):
            seen.append(chunk)

    with pytest.raises(UpstreamTimeoutError) as caught:
        await drain()

    assert seen  # what came in time was handed on
    assert all(isinstance(chunk, TextDelta) for chunk in seen)
    assert caught.value.message == (
        f"the inference backend at {backend.base_url} did not finish its answer within"
        f" {TOTAL:g} s ([[providers]] total_timeout of 'fake')"
    )


async def test_an_answer_asked_for_whole_is_bounded_by_the_total(
    scripted: ScriptedModel, bounded: OpenAICompatibleProvider
) -> None:
    scripted.add_turn(*_trickle())

    with pytest.raises(UpstreamTimeoutError) as caught:
        await collect(bounded, dataclasses.replace(ask(), collected=True))

    assert "total_timeout" in caught.value.message


async def _pieces(count: int, pause: float = 0.0) -> AsyncGenerator[int, None]:
    for n in range(count):
        await asyncio.sleep(pause)
        yield n


def _never(which: Which, seconds: float) -> UpstreamTimeoutError:
    raise AssertionError(f"{which} passed ({seconds} s)")


async def test_the_time_the_consumer_takes_is_not_counted() -> None:
    deadlines = StreamDeadlines(first_byte=0.1, between_chunks=0.1, total=5.0)
    seen: list[int] = []
    async for piece in bounded_pieces(_pieces(4), deadlines, _never):
        await asyncio.sleep(0.3)  # three times the gap allowed, between two waits
        seen.append(piece)

    assert seen == [0, 1, 2, 3]


async def test_a_cancellation_from_outside_stays_a_cancellation() -> None:
    deadlines = StreamDeadlines(first_byte=5.0, between_chunks=5.0, total=5.0)

    async def drain() -> None:
        async for _ in bounded_pieces(_pieces(1, pause=30.0), deadlines, _never):
            pass

    task = asyncio.create_task(drain())
    await asyncio.sleep(0.05)
    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task


# --- one wait under a limit (asyncio.timeout's work, cheaper) ---------------------------------


async def test_a_wait_past_its_limit_ends_in_a_timeout() -> None:
    with pytest.raises(TimeoutError), Within(0.05) as limit:
        await asyncio.sleep(5)

    assert limit.expired()
    task = asyncio.current_task()
    assert task is not None
    assert task.cancelling() == 0  # its cancellation taken back: the task goes on
    await asyncio.sleep(0)


async def test_a_wait_within_its_limit_is_left_alone() -> None:
    with Within(5.0) as limit:
        await asyncio.sleep(0.01)

    assert not limit.expired()
    await asyncio.sleep(0.05)  # the timer was cancelled: no late cancellation


async def test_a_cancellation_under_a_limit_stays_a_cancellation() -> None:
    async def wait() -> None:
        with Within(5.0):
            await asyncio.sleep(30)

    task = asyncio.create_task(wait())
    await asyncio.sleep(0.05)
    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task
