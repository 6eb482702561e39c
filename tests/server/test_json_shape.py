"""The byte scan that bounds a body's nesting and size before it is parsed: checked against
the depth of what ``json`` decodes, on documents Hypothesis writes (strings full of brackets,
quotes and backslashes included)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentloom.api.limits import RequestLimits
from agentloom.errors import InvalidRequestError
from agentloom.server.json_shape import Shape, check_shape, shape

tricky = st.text(alphabet='[]{}",\\:abc \n\u00e9\U0001f600', max_size=12)
documents = st.recursive(
    st.none() | st.integers() | tricky,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(tricky, children, max_size=4),
    max_leaves=40,
)


def depth_of(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    return 0


@settings(max_examples=200, deadline=None)
@given(documents, st.booleans())
def test_the_depth_is_the_decoded_depth(value: Any, ascii_only: bool) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert shape(raw).depth == depth_of(value)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"{}", Shape(1, 2)),
        (b'"[[[{{{"', Shape(0, 1)),
        (b'{"a": "\\"[[", "b": "\\\\"}', Shape(1, 3)),
        (b"[1, [2, [3, 4]]]", Shape(3, 7)),  # 3 arrays, 3 commas, plus one
    ],
)
def test_known_shapes(raw: bytes, expected: Shape) -> None:
    assert shape(raw) == expected


def test_the_limits_are_enforced() -> None:
    limits = RequestLimits(max_json_depth=8, max_json_values=1_000)
    check_shape(b"[" * 8 + b"]" * 8, limits)
    with pytest.raises(InvalidRequestError, match="nested 9 levels deep; at most 8"):
        check_shape(b"[" * 9 + b"]" * 9, limits)
    with pytest.raises(InvalidRequestError, match="at most 1000"):
        check_shape(json.dumps(list(range(2_000))).encode(), limits)
