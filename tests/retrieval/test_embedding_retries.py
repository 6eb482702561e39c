"""The OpenAI-compatible embedder's retries and concurrent batches, against the fake backend over
real HTTP: rate limits (honouring retry-after), 5xx, timeouts and lost connections are retried,
other 4xx are not; batches run a few at once, keep their order, and one failing cancels the
rest. Waits go to a recording ``sleep``: no test sleeps for a retry."""

from __future__ import annotations

import socket
from collections.abc import Sequence

import anyio.lowlevel
import numpy as np
import pytest
from numpy.typing import NDArray
from pydantic import ValidationError

from agentloom.config import EmbeddingSettings
from agentloom.errors import (
    UpstreamError,
    UpstreamRateLimitError,
    UpstreamRequestError,
    UpstreamTimeoutError,
)
from agentloom.retrieval.embeddings import OpenAICompatibleEmbedder
from agentloom.retrieval.retries import RetryPolicy, is_transient
from agentloom.testing.backend import FakeBackend

TEXTS = [f"text number {n} about {'cats' if n % 2 else 'stocks'}" for n in range(20)]


class Naps:
    """A ``sleep`` that records the seconds asked for and returns at once."""

    def __init__(self) -> None:
        self.taken: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.taken.append(seconds)
        await anyio.lowlevel.checkpoint()


@pytest.fixture
def naps() -> Naps:
    return Naps()


def settings(base_url: str, **changes: object) -> EmbeddingSettings:
    fields: dict[str, object] = {
        "type": "openai_compatible",
        "base_url": base_url,
        "model": "embed-small",
        "timeout": 5.0,
        "retry_base_delay": 0.1,
    }
    return EmbeddingSettings.model_validate(fields | changes)


async def embed(
    backend: FakeBackend, texts: Sequence[str], naps: Naps, **changes: object
) -> NDArray[np.float32]:
    embedder = OpenAICompatibleEmbedder(settings(backend.base_url, **changes), sleep=naps)
    try:
        return await embedder.embed(texts)
    finally:
        await embedder.aclose()


@pytest.fixture
async def expected(backend: FakeBackend) -> NDArray[np.float32]:
    """TEXTS embedded one batch at a time, without failures (and nothing recorded)."""
    rows = await embed(backend, TEXTS, Naps(), batch_size=2, max_concurrency=1)
    assert backend.embedding_peak == 1
    backend.reset()
    return rows


# --- retried ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("retry_after", "max_delay", "wait"),
    [(0.25, 30.0, 0.25), (120.0, 5.0, 5.0), (0.0, 30.0, 0.0)],
)
async def test_a_rate_limit_is_retried_after_its_retry_after(
    backend: FakeBackend, naps: Naps, retry_after: float, max_delay: float, wait: float
) -> None:
    backend.embedding_errors.append(UpstreamRateLimitError("slow down", retry_after=retry_after))

    rows = await embed(backend, ["hello"], naps, retry_max_delay=max_delay)

    assert rows.shape == (1, 64)
    assert len(backend.embedding_requests) == 2
    assert backend.embedding_requests[0] == backend.embedding_requests[1]
    assert naps.taken == [wait]  # retry-after-ms, capped at retry_max_delay


async def test_server_errors_are_retried_with_growing_waits(
    backend: FakeBackend, naps: Naps
) -> None:
    backend.embedding_errors.extend(
        [UpstreamError("bad gateway", status=502), UpstreamError("bad gateway", status=502)]
    )

    rows = await embed(backend, ["hello", "world"], naps)

    assert rows.shape == (2, 64)
    assert len(backend.embedding_requests) == 3
    first, second = naps.taken
    assert 0.05 <= first <= 0.1  # base 0.1, jittered between half and all of it
    assert 0.1 <= second <= 0.2  # doubled


async def test_a_timeout_is_retried(backend: FakeBackend, naps: Naps) -> None:
    backend.embedding_delays.append(5.0)  # the first answer comes long after the timeout

    rows = await embed(backend, ["hello"], naps, timeout=0.3)

    assert rows.shape == (1, 64)
    assert len(backend.embedding_requests) == 2
    assert len(naps.taken) == 1


async def test_a_lost_connection_is_retried(naps: Naps) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens there once the socket is closed
    embedder = OpenAICompatibleEmbedder(
        settings(f"http://127.0.0.1:{port}/v1", max_retries=2), sleep=naps
    )
    try:
        with pytest.raises(UpstreamError, match="could not reach the embeddings backend"):
            await embedder.embed(["hello"])
    finally:
        await embedder.aclose()
    assert len(naps.taken) == 2


# --- not retried -----------------------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 401, 404, 422])
async def test_a_rejected_request_is_not_retried(
    backend: FakeBackend, naps: Naps, status: int
) -> None:
    backend.embedding_errors.append(UpstreamRequestError("no such model", status=status))

    with pytest.raises(UpstreamRequestError) as caught:
        await embed(backend, ["hello"], naps)

    assert caught.value.status == status
    assert len(backend.embedding_requests) == 1
    assert naps.taken == []


async def test_exhausted_retries_raise_the_upstream_error(backend: FakeBackend, naps: Naps) -> None:
    backend.embedding_errors.extend(UpstreamError("overloaded", status=503) for _ in range(4))

    with pytest.raises(UpstreamError) as caught:
        await embed(backend, ["hello"], naps, max_retries=2)

    assert type(caught.value) is UpstreamError
    assert caught.value.status == 503
    assert "overloaded" in caught.value.message
    assert len(backend.embedding_requests) == 3  # the request and two retries
    assert len(naps.taken) == 2
    assert len(backend.embedding_errors) == 1  # the fourth error was never asked for


async def test_exhausted_rate_limits_keep_their_retry_after(
    backend: FakeBackend, naps: Naps
) -> None:
    backend.embedding_errors.extend(
        UpstreamRateLimitError("slow down", retry_after=2) for _ in range(2)
    )

    with pytest.raises(UpstreamRateLimitError) as caught:
        await embed(backend, ["hello"], naps, max_retries=1)

    assert caught.value.retry_after == 2
    assert naps.taken == [2.0]


# --- concurrent batches ----------------------------------------------------------------------


async def test_concurrent_batches_keep_their_order(
    backend: FakeBackend, naps: Naps, expected: NDArray[np.float32]
) -> None:
    # the first batches answer last, so answers come back out of order
    backend.embedding_delays.extend([0.2, 0.15, 0.1, 0.05])

    rows = await embed(backend, TEXTS, naps, batch_size=2, max_concurrency=4)

    np.testing.assert_array_equal(rows, expected)
    sent = sorted(tuple(r["input"]) for r in backend.embedding_requests)
    assert sent == sorted(tuple(TEXTS[i : i + 2]) for i in range(0, len(TEXTS), 2))
    assert 1 < backend.embedding_peak <= 4


async def test_a_retried_batch_keeps_its_place(
    backend: FakeBackend, naps: Naps, expected: NDArray[np.float32]
) -> None:
    backend.embedding_errors.extend(
        [UpstreamRateLimitError("slow down", retry_after=0.01), UpstreamError("down", status=500)]
    )

    rows = await embed(backend, TEXTS, naps, batch_size=2, max_concurrency=4)

    np.testing.assert_array_equal(rows, expected)
    assert len(backend.embedding_requests) == 12  # ten batches, two of them twice
    assert len(naps.taken) == 2


async def test_a_failing_batch_cancels_the_others(backend: FakeBackend, naps: Naps) -> None:
    # the first request to arrive is refused; the other three in flight are slow to answer
    backend.embedding_delays.extend([0.0, 2.0, 2.0, 2.0])
    backend.embedding_errors.append(UpstreamRequestError("bad input", status=400))

    with pytest.raises(UpstreamRequestError, match="bad input"):
        await embed(backend, TEXTS, naps, batch_size=2, max_concurrency=4)

    assert len(backend.embedding_requests) <= 4  # the six batches waiting were never sent
    assert backend.embedding_peak <= 4


# --- the policy ------------------------------------------------------------------------------


def test_the_settings_and_their_bounds() -> None:
    defaults = EmbeddingSettings()
    assert (defaults.max_retries, defaults.max_concurrency) == (4, 4)
    assert (defaults.retry_base_delay, defaults.retry_max_delay) == (0.5, 30.0)
    for wrong in ({"max_concurrency": 0}, {"max_retries": -1}, {"retry_base_delay": -1}):
        with pytest.raises(ValidationError):
            EmbeddingSettings.model_validate(wrong)


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (UpstreamRateLimitError("slow", status=429), True),
        (UpstreamTimeoutError("late"), True),
        (UpstreamError("no connection"), True),
        (UpstreamError("bad gateway", status=502), True),
        (UpstreamError("down", status=500), True),
        (UpstreamRequestError("bad", status=400), False),
        (UpstreamRequestError("who", status=401), False),
        (UpstreamRequestError("gone", status=404), False),
    ],
)
def test_which_failures_are_transient(error: UpstreamError, transient: bool) -> None:
    assert is_transient(error) is transient


@pytest.mark.parametrize(
    ("retry", "jitter", "wait"),
    [(0, 0.0, 0.5), (0, 0.999, 0.9995), (1, 0.0, 1.0), (3, 0.0, 4.0), (10, 0.0, 5.0)],
)
def test_backoff_doubles_with_jitter_and_is_capped(retry: int, jitter: float, wait: float) -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=10.0, jitter=lambda: jitter)
    assert policy.delay(retry, UpstreamError("down", status=500)) == pytest.approx(wait)
