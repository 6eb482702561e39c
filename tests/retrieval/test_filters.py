"""Attribute filters: the wire models' validation and the matching semantics."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from agentloom.api.filters import MAX_FILTER_DEPTH, MAX_FILTER_NODES, Filter
from agentloom.retrieval.filters import Attributes, matches

FILTER: TypeAdapter[Filter] = TypeAdapter(Filter)

ATTRIBUTES: Attributes = {
    "author": "ada",
    "year": 2021,
    "score": 4.5,
    "draft": False,
    "date": "2024-03-01",
    "count": "10",
}


def parse(raw: dict[str, Any]) -> Filter:
    return FILTER.validate_python(raw)


def check(kind: str, key: str, value: object) -> bool:
    return matches(parse({"type": kind, "key": key, "value": value}), ATTRIBUTES)


@pytest.mark.parametrize(
    ("kind", "key", "value", "expected"),
    [
        ("eq", "author", "ada", True),
        ("eq", "author", "Ada", False),
        ("eq", "year", 2021, True),
        ("eq", "year", 2021.0, True),
        ("eq", "score", 4.5, True),
        ("eq", "draft", False, True),
        ("eq", "draft", 0, False),  # a boolean is not a number
        ("eq", "count", 10, False),  # nor is a string of digits
        ("ne", "author", "bob", True),
        ("ne", "author", "ada", False),
        ("ne", "count", 10, True),  # different kinds differ
        ("gt", "year", 2020, True),
        ("gt", "year", 2021, False),
        ("gte", "year", 2021, True),
        ("lt", "score", 5, True),
        ("lte", "score", 4.4, False),
        ("gte", "date", "2024-01-01", True),  # strings order lexicographically
        ("lt", "date", "2024-01-01", False),
        ("gt", "count", 9, False),  # a string never orders against a number
        ("gt", "author", 1, False),
        ("in", "author", ["bob", "ada"], True),
        ("in", "year", [2020, 2021], True),
        ("in", "year", ["2021"], False),
        ("in", "author", [], False),
        ("nin", "author", ["bob", "cy"], True),
        ("nin", "author", ["ada"], False),
        ("nin", "author", [], True),
    ],
)
def test_comparisons(kind: str, key: str, value: object, expected: bool) -> None:
    assert check(kind, key, value) is expected


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        ("eq", "x"),
        ("ne", "x"),
        ("gt", 1),
        ("gte", 1),
        ("lt", 1),
        ("lte", 1),
        ("in", ["x"]),
        ("nin", ["x"]),
    ],
)
def test_a_missing_key_never_matches(kind: str, value: object) -> None:
    assert check(kind, "missing", value) is False


def test_compound_filters_combine_and_nest() -> None:
    ada_recent = {
        "type": "and",
        "filters": [
            {"type": "eq", "key": "author", "value": "ada"},
            {"type": "gte", "key": "year", "value": 2020},
        ],
    }
    either = {"type": "or", "filters": [{"type": "eq", "key": "draft", "value": True}, ada_recent]}

    assert matches(parse(ada_recent), ATTRIBUTES)
    assert matches(parse(either), ATTRIBUTES)
    assert not matches(parse(either), {**ATTRIBUTES, "year": 1999})
    assert matches(parse(either), {"draft": True})


def _errors(raw: object) -> str:
    with pytest.raises(ValidationError) as caught:
        FILTER.validate_python(raw)
    return str(caught.value)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"type": "like", "key": "a", "value": "x"}, "does not match any of the expected tags"),
        ({"type": "eq", "key": "a"}, "Field required"),
        ({"type": "eq", "key": "", "value": "x"}, "at least 1 character"),
        ({"type": "eq", "key": "a", "value": None}, "must be a string, a number, a boolean"),
        ({"type": "eq", "key": "a", "value": {"x": 1}}, "must be a string, a number, a boolean"),
        ({"type": "eq", "key": "a", "value": ["x"]}, "needs a single value, not a list"),
        ({"type": "in", "key": "a", "value": "x"}, "'in' filter needs a list value"),
        ({"type": "nin", "key": "a", "value": [True]}, "may only hold strings and numbers"),
        ({"type": "gt", "key": "a", "value": True}, "needs a number or a string value"),
        ({"type": "and", "filters": []}, "at least 1 item"),
        ({"type": "or"}, "Field required"),
    ],
)
def test_invalid_filters_are_refused_with_a_clear_message(raw: object, message: str) -> None:
    assert message in _errors(raw)


def _nested(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "eq", "key": "a", "value": 1}
    for _ in range(levels - 1):
        node = {"type": "and", "filters": [node]}
    return node


def test_nesting_is_limited() -> None:
    parse(_nested(MAX_FILTER_DEPTH))

    assert f"at most {MAX_FILTER_DEPTH} levels deep" in _errors(_nested(MAX_FILTER_DEPTH + 1))
    assert "levels deep" in _errors(_nested(500))


def test_the_number_of_filters_is_limited() -> None:
    leaf = {"type": "eq", "key": "a", "value": 1}
    parse({"type": "or", "filters": [leaf] * (MAX_FILTER_NODES - 1)})

    too_many = {"type": "or", "filters": [leaf] * MAX_FILTER_NODES}
    assert f"at most {MAX_FILTER_NODES} filters in all" in _errors(too_many)


def test_filters_parse_from_json_like_the_wire() -> None:
    parsed = FILTER.validate_json(
        '{"type": "and", "filters": [{"type": "in", "key": "year", "value": [2020, 2021]},'
        ' {"type": "eq", "key": "draft", "value": false}]}'
    )

    assert matches(parsed, ATTRIBUTES)
