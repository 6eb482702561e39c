"""What an upstream service answered, as an agentloom error: one table for every upstream
(inference backends, embeddings servers, web search APIs), so a 429 is a rate limit with its
retry hint, a 401 a credentials problem and a context overflow a context error wherever they
come from. Upstream status codes are never forwarded as they are: the HTTP edge maps these
errors to statuses of its own (:mod:`agentloom.server.errors`).
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Callable, Mapping
from typing import Final

from agentloom.errors import (
    ContextLengthExceededError,
    UpstreamError,
    UpstreamRateLimitError,
    UpstreamRequestError,
)
from agentloom.frozen import frozen
from agentloom.text import clip

MAX_MESSAGE: Final = 500  # characters of an upstream's own message kept in ours
_CONTEXT_PHRASES: Final = (
    "context length",
    "context_length",
    "maximum context",
    "context window",
    "context size",
    "exceed_context",
    "too many tokens",
)


@frozen
class Failure:
    """What an upstream said when it refused or failed: its HTTP status (if known), its
    message, OpenAI's ``code`` and ``param``, and how long it asked us to wait."""

    status: int | None
    message: str
    code: str | None = None
    param: str | None = None
    retry_after: float | None = None

    @classmethod
    def of_http(cls, status: int, headers: Mapping[str, str], raw: bytes) -> Failure:
        """A non-2xx HTTP answer: OpenAI's ``{"error": {...}}``, vLLM's ``{"message": ...}``,
        or plain text."""
        try:
            body: object = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace").strip()
        data = body.get("error", body) if isinstance(body, dict) else body
        fields = data if isinstance(data, dict) else {}
        message = fields.get("message") if fields else data
        code = fields.get("code")
        param = fields.get("param")
        return cls(
            status=status,
            message=message if isinstance(message, str) and message else f"HTTP {status}",
            code=None if code is None else str(code),
            param=param if isinstance(param, str) else None,
            retry_after=retry_after(headers) if status == 429 else None,
        )


_Rule = tuple[Callable[[int | None], bool], type[UpstreamError], str]
_RULES: Final[tuple[_Rule, ...]] = (
    (lambda s: s == 429, UpstreamRateLimitError, "{who} is rate limiting requests: {text}"),
    (
        lambda s: s in (401, 403),
        UpstreamRequestError,
        "{who} refused the credentials ({status}); check its API key: {text}",
    ),
    (
        lambda s: s is not None and 400 <= s < 500,
        UpstreamRequestError,
        "{who} rejected the request ({status}): {text}",
    ),
)
"""The first rule whose status test passes makes the error; none: the upstream failed."""


def upstream_error(who: str, failure: Failure, *, context_window: bool = False) -> UpstreamError:
    """The error for ``failure`` of ``who`` ("the inference backend"); ``context_window``: a
    model's answer, which may say the input did not fit."""
    text = clip(failure.message, MAX_MESSAGE)
    status = failure.status
    if context_window and is_context_length(status, failure.message, failure.code):
        message = f"the input does not fit the model's context window: {text}"
        return ContextLengthExceededError(message, status=status)
    for applies, kind, template in _RULES:
        if applies(status):
            message = template.format(who=who, status=status, text=text)
            if kind is UpstreamRateLimitError:
                return UpstreamRateLimitError(message, status=429, retry_after=failure.retry_after)
            return UpstreamRequestError(message, status=status, param=failure.param)
    where = f" ({status})" if status is not None else ""
    return UpstreamError(f"{who} failed{where}: {text}", status=status)


def is_context_length(status: int | None, message: str, code: str | None) -> bool:
    if status not in (None, 400, 413):
        return False
    if code is not None and "context" in code:
        return True
    lowered = message.lower()
    return any(phrase in lowered for phrase in _CONTEXT_PHRASES)


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None
