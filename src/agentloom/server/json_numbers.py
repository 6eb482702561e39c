"""Numbers that are not JSON: ``NaN``, ``Infinity`` and ``-Infinity`` (JavaScript's, which
Python's and pydantic's parsers read anyway), and literals too large for a double (``1e400``,
read as infinity). A body holding one is refused, naming where, rather than stored changed (a
non-finite number is written ``null``).

Most bodies hold none of them, which a scan of their bytes shows (no ``NaN``, no ``Infinity``,
no exponent of three digits, no run of 309 digits); only the others are parsed and walked.
"""

from __future__ import annotations

import math
import re

import pydantic_core

from agentloom.errors import InvalidRequestError

_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 309  # digits enough to pass a double's largest value, 1.8e308
_LARGE_EXPONENT = re.compile(rb"[eE][+-]?[0-9]{3}")
_NAMES = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}

Node = tuple[str, object]  # a JSON value and its path (``tools[0].parameters``)


def check_finite(raw: bytes) -> None:
    """Refuse ``raw`` when a number in it is not finite; what is not JSON at all is left to
    the parser to refuse."""
    if not _may_hold_one(raw):
        return
    try:
        value = pydantic_core.from_json(raw)
    except ValueError:
        return
    found = non_finite(value)
    if found is not None:
        raise _refusal(*found)


def _may_hold_one(raw: bytes) -> bool:
    # find, not ``in``: ``bytes in bytes`` tries the operand as an int first, and makes and
    # drops a TypeError each time (every body passes here)
    return (
        raw.find(b"NaN") >= 0
        or raw.find(b"Infinity") >= 0
        or _LARGE_EXPONENT.search(raw) is not None
        or raw.translate(_DIGITS).find(_LONG_NUMBER) >= 0
    )


def non_finite(value: object) -> tuple[str, float] | None:
    """The path and value of the first non-finite number in ``value`` (decoded JSON), in
    document order; ``None`` when every number is finite."""
    stack: list[Node] = [("", value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            return path, node
        if isinstance(node, dict):
            stack.extend(reversed([(_key(path, k), v) for k, v in node.items()]))
        elif isinstance(node, list):
            stack.extend(reversed([(f"{path}[{i}]", v) for i, v in enumerate(node)]))
    return None


def _key(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _refusal(path: str, number: float) -> InvalidRequestError:
    name = _NAMES[repr(number)]
    where = f"Invalid value for '{path}': " if path else ""
    return InvalidRequestError(
        f"{where}{name} is not valid JSON. A JSON number is finite: NaN and Infinity are not "
        "JSON, and a number beyond a double's range (about 1.8e308) reads as Infinity.",
        param=path or None,
        code="invalid_json",
    )
