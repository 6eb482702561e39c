"""Llama Stack's ``sampling_params``, as what a Responses request can say.

| ``sampling_params``                                   | Responses request             |
|-------------------------------------------------------|-------------------------------|
| ``strategy: {"type": "greedy"}``                      | ``temperature: 0``            |
| ``strategy: {"type": "top_p", "temperature", "top_p"}`` | ``temperature``, ``top_p``  |
| ``max_tokens`` (0: no limit)                          | ``max_output_tokens``         |
| ``repetition_penalty: 1.0`` (no penalty)              | nothing to send               |

The Responses API has no top-k sampling, no multiplicative repetition penalty and no stop
sequences: ``strategy: {"type": "top_k"}``, another ``repetition_penalty`` and a non-empty
``stop`` are refused by name (a ``ValueError`` when the agent is made), never dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, NotRequired, TypeAlias, TypedDict

from agentloom.frozen import frozen

__all__ = ["Sampling", "SamplingParams", "sampling"]

MIN_OUTPUT_TOKENS = 16  # the Responses API's floor for max_output_tokens


class GreedyStrategy(TypedDict):
    type: Literal["greedy"]


class TopPStrategy(TypedDict):
    type: Literal["top_p"]
    temperature: NotRequired[float]
    top_p: NotRequired[float]


class TopKStrategy(TypedDict):
    type: Literal["top_k"]
    top_k: int


Strategy: TypeAlias = GreedyStrategy | TopPStrategy | TopKStrategy


class SamplingParams(TypedDict, total=False):
    strategy: Strategy
    max_tokens: int
    repetition_penalty: float
    stop: list[str]


@frozen
class Sampling:
    """The sampling fields of each Responses request (``None``: the server's default)."""

    temperature: float | None = None
    top_p: float | None = None
    max_output_tokens: int | None = None


_KEYS = frozenset({"strategy", "max_tokens", "repetition_penalty", "stop"})


def sampling(params: SamplingParams | Mapping[str, object] | None) -> Sampling:
    """``params`` as Responses fields; what the API cannot honour is a ``ValueError``."""
    if not params:
        return Sampling()
    unknown = sorted(set(params) - _KEYS)
    if unknown:
        raise ValueError(f"sampling_params.{unknown[0]} is not a sampling parameter")
    _no_penalty(params.get("repetition_penalty"))
    _no_stop(params.get("stop"))
    temperature, top_p = _strategy(params.get("strategy"))
    return Sampling(temperature, top_p, _max_tokens(params.get("max_tokens")))


def _strategy(strategy: object) -> tuple[float | None, float | None]:
    if strategy is None:
        return None, None
    if not isinstance(strategy, Mapping):
        raise ValueError("sampling_params.strategy must be a mapping with a type")
    kind = strategy.get("type")
    if kind == "greedy":
        _only(strategy, {"type"})
        return 0.0, None
    if kind == "top_p":
        _only(strategy, {"type", "temperature", "top_p"})
        temperature = _number(strategy, "temperature", 0.0, 2.0)
        return temperature, _number(strategy, "top_p", 0.0, 1.0)
    if kind == "top_k":
        raise ValueError(
            "sampling_params.strategy: top_k sampling is not in the Responses API; "
            "use {'type': 'top_p'} or {'type': 'greedy'}"
        )
    raise ValueError(f"sampling_params.strategy.type {kind!r} is not greedy, top_p or top_k")


def _only(strategy: Mapping[str, object], allowed: set[str]) -> None:
    unknown = sorted(set(strategy) - allowed)
    if unknown:
        kind = strategy["type"]
        raise ValueError(f"sampling_params.strategy.{unknown[0]} is not a {kind} parameter")


def _number(strategy: Mapping[str, object], key: str, low: float, high: float) -> float | None:
    value = strategy.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise ValueError(f"sampling_params.strategy.{key} must be a number from {low} to {high}")
    return float(value)


def _max_tokens(value: object) -> int | None:
    if value is None or value == 0:
        return None  # Llama Stack's 0: no limit
    if isinstance(value, bool) or not isinstance(value, int) or value < MIN_OUTPUT_TOKENS:
        raise ValueError(
            f"sampling_params.max_tokens must be 0 (no limit) or at least {MIN_OUTPUT_TOKENS}"
        )
    return value


def _no_penalty(value: object) -> None:
    if value is not None and value != 1.0:
        raise ValueError(
            "sampling_params.repetition_penalty: the Responses API has no repetition penalty "
            "(only 1.0, no penalty, is accepted)"
        )


def _no_stop(value: object) -> None:
    if value:
        raise ValueError("sampling_params.stop: the Responses API has no stop sequences")
