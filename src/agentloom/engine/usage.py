"""Token usage: a backend's report in the Response's shape, and a run's running total."""

from __future__ import annotations

from dataclasses import dataclass

from agentloom.api.response import ResponseUsage
from agentloom.inference import base as inf


def response_usage(usage: inf.Usage) -> ResponseUsage:
    return ResponseUsage.of(
        usage.input_tokens,
        usage.output_tokens,
        cached=usage.cached_tokens,
        reasoning=usage.reasoning_tokens,
    )


@dataclass(slots=True)
class UsageTally:
    """What a run's model calls used so far, as numbers: the Response's usage object (three
    models) is built once, when the run ends, not once per call added."""

    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0

    def add(self, usage: inf.Usage) -> None:
        self.input_tokens += usage.input_tokens
        self.cached_tokens += usage.cached_tokens
        self.output_tokens += usage.output_tokens
        self.reasoning_tokens += usage.reasoning_tokens

    def response_usage(self) -> ResponseUsage:
        return ResponseUsage.of(
            self.input_tokens,
            self.output_tokens,
            cached=self.cached_tokens,
            reasoning=self.reasoning_tokens,
        )
