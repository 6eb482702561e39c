"""Query-string parameters of list endpoints, validated with clear errors."""

from __future__ import annotations

from typing import Literal

from starlette.datastructures import QueryParams

from agentloom.api.requests import KNOWN_INCLUDES
from agentloom.errors import InvalidRequestError


def limit_param(params: QueryParams, *, default: int = 20, maximum: int = 100) -> int:
    raw = params.get("limit")
    if raw is None:
        return default
    if not raw.lstrip("-").isdigit() or not 1 <= int(raw) <= maximum:
        raise InvalidRequestError(
            f"Invalid 'limit': expected an integer between 1 and {maximum}, got '{raw}'.",
            param="limit",
            code="invalid_value",
        )
    return int(raw)


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
