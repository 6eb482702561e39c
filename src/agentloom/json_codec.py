"""JSON on the hot path: pydantic-core's parser and encoder (Rust), several times faster than
the stdlib for the small documents every response handles (stream chunks, request bodies sent
upstream, stored rows), with the stdlib's results: integers of any size, ``NaN`` accepted (a
backend may send it).

What is written is JSON only: ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON (JavaScript's
``JSON.parse`` and Go's ``encoding/json`` refuse them). A non-finite number is written as the
nearest number JSON has, so a field typed as a number stays one: ``±Infinity`` as the largest
double of its sign (``-Infinity``, a backend's log probability of an impossible token, reads
back as the same zero probability), ``NaN``, which is no number at all, as ``null``.
"""

from __future__ import annotations

import math
import sys

import pydantic_core

LARGEST = sys.float_info.max  # 1.7976931348623157e308
_NOT_JSON = ("NaN", "Infinity")  # what Python's and pydantic's parsers read beyond JSON


def loads(data: str | bytes) -> object:
    """The value of the JSON document ``data``; ``ValueError`` when it is not JSON."""
    return pydantic_core.from_json(data)


def dumps(value: object) -> bytes:
    """``value`` (JSON types only) as compact UTF-8 JSON; a non-finite number as the nearest
    JSON has (see above)."""
    written = pydantic_core.to_json(value)
    # rare: a string saying so, or one. (find, not ``in``: ``bytes in bytes`` tries the operand
    # as an int first, and makes and drops a TypeError each time)
    if written.find(b"NaN") >= 0 or written.find(b"Infinity") >= 0:
        return pydantic_core.to_json(finite_value(value))
    return written


def finite(document: str) -> str:
    """``document`` (a backend's, handed on as it came) made JSON: as it is, unless it may hold
    ``NaN`` or ``Infinity``; then decoded and written again. What does not decode is left as
    it is."""
    if not any(word in document for word in _NOT_JSON):
        return document
    try:
        return dumps(loads(document)).decode()
    except ValueError:
        return document


def finite_number(number: float) -> float | None:
    """``number`` as JSON can hold it: ``±Infinity`` as ``±LARGEST``, ``NaN`` as ``None``."""
    if math.isfinite(number):
        return number
    return None if math.isnan(number) else math.copysign(LARGEST, number)


def finite_value(value: object) -> object:
    """``value`` (decoded JSON) with every non-finite number as :func:`finite_number` has it."""
    if isinstance(value, float):
        return finite_number(value)
    if isinstance(value, dict):
        return {key: finite_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [finite_value(item) for item in value]
    return value
