"""What one request may hold: OpenAI's limits where it states them, ours where it does not.

The server's ``[limits]`` (:class:`RequestLimits`) travels as the validation context of every
request body; :func:`at_most` caps a list field by one of them before its elements are
validated, so an oversized list costs no more than counting it. Outside a request (stored data,
tests) no cap applies.
"""

from __future__ import annotations

from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)
from pydantic_core import PydanticCustomError

JSON_PARSER_DEPTH = 200  # pydantic's JSON parser refuses deeper documents itself

LimitName = Literal["max_input_items", "max_content_parts", "max_tools"]
TOO_LONG = "array_above_max_length"  # OpenAI's error code for an over-long array


class RequestLimits(BaseModel):
    """``[limits]``: the size of what one request may ask the server to process, and the time
    its response may take."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_json_depth: int = Field(default=128, ge=8, le=JSON_PARSER_DEPTH)
    """Nesting of objects and arrays in a body (a WebSocket frame too)."""
    max_json_values: int = Field(default=250_000, ge=1_000)
    """Objects, arrays and their members in a body: bounds the parsing work of one request."""
    max_input_items: int = Field(default=10_000, ge=1)
    """Items of ``input`` (OpenAI states no limit)."""
    max_content_parts: int = Field(default=1_000, ge=1)
    """Content parts of one message."""
    max_tools: int = Field(default=128, ge=1)
    """Tools offered by one request (OpenAI's limit), and tools in one namespace."""
    response_timeout: float = Field(default=1800.0, gt=0)
    """Seconds one response may run (model calls and server tools); past them it ends
    ``failed``, saying so, and a background response's job slot is free again."""


def at_most(limit: LimitName) -> WrapValidator:
    """Validation of a list refused before its elements when it is longer than ``limit``."""

    def check(value: object, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> object:
        limits = info.context
        if isinstance(limits, RequestLimits) and isinstance(value, list):
            most = getattr(limits, limit)
            if len(value) > most:
                raise PydanticCustomError(
                    TOO_LONG,
                    "array too long. Expected an array with maximum length {most}, but got an "
                    "array with length {length} instead",
                    {"most": most, "length": len(value)},
                )
        return handler(value)

    return WrapValidator(check)
