"""One table turns what any upstream answered into an agentloom error."""

from __future__ import annotations

import pytest

from agentloom.errors import (
    ContextLengthExceededError,
    UpstreamError,
    UpstreamRateLimitError,
    UpstreamRequestError,
)
from agentloom.upstream import Failure, retry_after, upstream_error

WHO = "the embeddings backend"


@pytest.mark.parametrize(
    ("failure", "kind", "message"),
    [
        (
            Failure(429, "slow down", retry_after=1.5),
            UpstreamRateLimitError,
            f"{WHO} is rate limiting requests: slow down",
        ),
        (
            Failure(401, "bad key"),
            UpstreamRequestError,
            f"{WHO} refused the credentials (401); check its API key: bad key",
        ),
        (
            Failure(422, "no such model", param="model"),
            UpstreamRequestError,
            f"{WHO} rejected the request (422): no such model",
        ),
        (Failure(503, "overloaded"), UpstreamError, f"{WHO} failed (503): overloaded"),
        (Failure(None, "the stream broke"), UpstreamError, f"{WHO} failed: the stream broke"),
    ],
)
def test_the_table(failure: Failure, kind: type[UpstreamError], message: str) -> None:
    error = upstream_error(WHO, failure)

    assert type(error) is kind
    assert error.message == message
    assert error.status == failure.status
    if isinstance(error, UpstreamRateLimitError):
        assert error.retry_after == 1.5
    if failure.param is not None:
        assert error.param == failure.param


def test_a_context_overflow_is_told_only_for_model_answers() -> None:
    failure = Failure(400, "This model's maximum context length is 8192 tokens")

    assert isinstance(upstream_error(WHO, failure, context_window=True), ContextLengthExceededError)
    assert type(upstream_error(WHO, failure)) is UpstreamRequestError


@pytest.mark.parametrize(
    ("raw", "message", "code"),
    [
        (
            b'{"error": {"message": "nope", "code": "invalid_model", "param": "m"}}',
            "nope",
            "invalid_model",
        ),
        (b'{"message": "vllm says", "code": 400}', "vllm says", "400"),
        (b"plain text", "plain text", None),
        (b"", "HTTP 418", None),
    ],
)
def test_an_http_answer_is_read_as_openai_and_vllm_write_errors(
    raw: bytes, message: str, code: str | None
) -> None:
    failure = Failure.of_http(418, {}, raw)
    assert (failure.message, failure.code) == (message, code)


def test_a_long_upstream_message_is_clipped() -> None:
    error = upstream_error(WHO, Failure(500, "x" * 2_000))
    assert len(error.message) < 600
    assert error.message.endswith("…")


def test_retry_after_reads_milliseconds_seconds_and_dates() -> None:
    assert retry_after({"retry-after-ms": "1500"}) == 1.5
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None
