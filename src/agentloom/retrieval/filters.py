"""Evaluating an attribute filter against one file's attributes.

Values compare only with values of their own kind: numbers with numbers (ints and floats alike),
strings with strings, booleans with booleans; ``gt``/``gte``/``lt``/``lte`` order numbers
numerically and strings lexicographically. A comparison between different kinds is false for
``eq``, ``in`` and the ordering types, and true for ``ne`` and ``nin`` (the values differ).

A missing key makes every comparison on it false, ``ne`` and ``nin`` included: a filter only
selects files that carry the attribute it names (OpenAI behaves the same way).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from agentloom.api.filters import CompoundFilter, Filter

__all__ = ["Attributes", "matches"]

Attribute = str | float | bool
Attributes = Mapping[str, Attribute]
_Ordering = Callable[[Any, Any], bool]  # operator.gt and friends, on two values of one kind


def matches(filter: Filter, attributes: Attributes) -> bool:
    """Whether ``attributes`` satisfy ``filter``."""
    if isinstance(filter, CompoundFilter):
        combine = all if filter.type == "and" else any
        return combine(matches(child, attributes) for child in filter.filters)
    if filter.key not in attributes:
        return False
    return _COMPARISONS[filter.type](attributes[filter.key], filter.value)


def _kind(value: object) -> type:
    if isinstance(value, bool):
        return bool
    if isinstance(value, int | float):
        return float
    return type(value)


def _equal(actual: Attribute, expected: object) -> bool:
    return _kind(actual) is _kind(expected) and actual == expected


def _member(actual: Attribute, expected: object) -> bool:
    return isinstance(expected, list) and any(_equal(actual, item) for item in expected)


def _ordered(compare: _Ordering) -> Callable[[Attribute, object], bool]:
    def check(actual: Attribute, expected: object) -> bool:
        kind = _kind(actual)
        return kind is _kind(expected) and kind is not bool and compare(actual, expected)

    return check


_COMPARISONS: dict[str, Callable[[Attribute, object], bool]] = {
    "eq": _equal,
    "ne": lambda actual, expected: not _equal(actual, expected),
    "gt": _ordered(operator.gt),
    "gte": _ordered(operator.ge),
    "lt": _ordered(operator.lt),
    "lte": _ordered(operator.le),
    "in": _member,
    "nin": lambda actual, expected: not _member(actual, expected),
}
