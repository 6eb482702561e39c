"""Query-string parameters of list endpoints, validated with clear errors."""

from __future__ import annotations

from collections.abc import Collection
from typing import Literal

from starlette.datastructures import QueryParams

from agentloom.api.integers import INT32_MAX
from agentloom.api.metadata import METADATA_MAX_KEY, METADATA_MAX_PAIRS, METADATA_MAX_VALUE
from agentloom.api.requests import KNOWN_INCLUDES
from agentloom.errors import InvalidRequestError

MAX_UNIX_SECONDS = 253_402_300_799  # 9999-12-31T23:59:59Z
MAX_SEQUENCE = INT32_MAX  # a stored event's number: a 32-bit column


def whole_number(raw: str, most: int) -> int | None:
    """``raw`` as a whole number from 0 to ``most``, or ``None``: ASCII digits only
    (``str.isdigit`` takes ``²``, which ``int`` refuses) and never more than ``most`` (what a
    database column holds)."""
    if not (raw.isascii() and raw.isdigit()) or len(raw) > len(str(most)):
        return None
    value = int(raw)
    return value if value <= most else None


def limit_param(params: QueryParams, *, default: int = 20, maximum: int = 100) -> int:
    raw = params.get("limit")
    if raw is None:
        return default
    value = whole_number(raw, maximum)
    if value is None or value < 1:
        raise InvalidRequestError(
            f"Invalid 'limit': expected an integer between 1 and {maximum}, got '{raw[:100]}'.",
            param="limit",
            code="invalid_value",
        )
    return value


def order_param(
    params: QueryParams, *, default: Literal["asc", "desc"] = "desc"
) -> Literal["asc", "desc"]:
    raw = params.get("order", default)
    if raw == "asc":
        return "asc"
    if raw == "desc":
        return "desc"
    raise InvalidRequestError(
        f"Invalid 'order': expected 'asc' or 'desc', got '{raw}'.",
        param="order",
        code="invalid_value",
    )


def starting_after_param(params: QueryParams, counted: str) -> int:
    """``starting_after``: the number of the last event (``counted``: what the numbers count)
    a stream's follower has seen; -1 when it has seen none."""
    raw = params.get("starting_after")
    if raw is None:
        return -1
    value = whole_number(raw, MAX_SEQUENCE)
    if value is None:
        raise InvalidRequestError(
            f"Invalid 'starting_after': expected {counted}, got '{raw[:100]}'.",
            param="starting_after",
            code="invalid_value",
        )
    return value


def optional_param(params: QueryParams, name: str) -> str | None:
    value = params.get(name)
    return value if value else None


def include_param(params: QueryParams) -> list[str]:
    """``include`` (repeated, or ``include[]=``): known values only. Stored objects keep what was
    computed when they were created, so a known value never adds anything at read time."""
    values = params.getlist("include") + params.getlist("include[]")
    unknown = [v for v in values if v not in KNOWN_INCLUDES]
    if unknown:
        raise InvalidRequestError(
            f"Invalid 'include': unknown value(s) {', '.join(unknown)}.",
            param="include",
            code="invalid_value",
        )
    return values


def unix_seconds_param(params: QueryParams, name: str, *, required: bool = False) -> int | None:
    """A time as whole unix seconds (``start_time=1700000000``)."""
    raw = params.get(name)
    if raw is None:
        if required:
            raise InvalidRequestError(
                f"Missing required parameter: '{name}'.",
                param=name,
                code="missing_required_parameter",
            )
        return None
    value = whole_number(raw, MAX_UNIX_SECONDS)
    if value is None:
        raise InvalidRequestError(
            f"Invalid '{name}': expected unix seconds, got '{raw[:100]}'.",
            param=name,
            code="invalid_value",
        )
    return value


def choice_param(params: QueryParams, name: str, choices: Collection[str]) -> str | None:
    """One of ``choices``, or ``None`` when left out (or empty)."""
    raw = optional_param(params, name)
    if raw is None or raw in choices:
        return raw
    raise InvalidRequestError(
        f"Invalid '{name}': expected one of {', '.join(choices)}, got '{raw[:100]}'.",
        param=name,
        code="invalid_value",
    )


def metadata_params(params: QueryParams) -> tuple[tuple[str, str], ...]:
    """``metadata[key]=value`` pairs (any number, up to what metadata holds), as the list of chat
    completions takes them: the objects whose metadata has every one."""
    pairs = [(name[9:-1], value) for name, value in params.multi_items() if _is_metadata(name)]
    if len(pairs) > METADATA_MAX_PAIRS:
        raise InvalidRequestError(
            f"Invalid 'metadata': at most {METADATA_MAX_PAIRS} pairs, got {len(pairs)}.",
            param="metadata",
            code="invalid_value",
        )
    for key, value in pairs:
        if not key or len(key) > METADATA_MAX_KEY or len(value) > METADATA_MAX_VALUE:
            raise InvalidRequestError(
                f"Invalid 'metadata[{key[:100]}]': keys are 1 to {METADATA_MAX_KEY} characters,"
                f" values at most {METADATA_MAX_VALUE}.",
                param=f"metadata[{key[:100]}]",
                code="invalid_value",
            )
    return tuple(pairs)


def _is_metadata(name: str) -> bool:
    return name.startswith("metadata[") and name.endswith("]")
