"""Token usage: a backend's report in the Response's shape."""

from __future__ import annotations

from agentloom.api.response import ResponseUsage
from agentloom.inference import base as inf


def response_usage(usage: inf.Usage) -> ResponseUsage:
    return ResponseUsage.of(
        usage.input_tokens,
        usage.output_tokens,
        cached=usage.cached_tokens,
        reasoning=usage.reasoning_tokens,
    )
