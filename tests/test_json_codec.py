"""The hot path's JSON: pydantic-core's speed, the stdlib's results."""

from __future__ import annotations

import json
import math
import sys

import pytest

from agentloom import json_codec


def test_loads_reads_what_the_stdlib_reads() -> None:
    assert json_codec.loads('{"a": [1, 2.5, "x", null, true]}') == {"a": [1, 2.5, "x", None, True]}
    assert json_codec.loads(b'{"big": 123456789012345678901234567890}') == {
        "big": 123456789012345678901234567890  # beyond 64 bits: the stdlib reads it
    }
    value = json_codec.loads('{"v": NaN}')
    assert isinstance(value, dict)
    assert math.isnan(value["v"])


def test_loads_refuses_what_is_not_json() -> None:
    with pytest.raises(ValueError, match="key must be a string"):
        json_codec.loads("{not json")


def test_dumps_is_compact_utf8_json() -> None:
    value = {"text": "héllo ✓", "n": [1, 2.5, None], "nested": {"ok": True}}
    assert (
        json_codec.dumps(value)
        == json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
    )
    big = {"max": 10**30}  # beyond 64 bits
    assert json.loads(json_codec.dumps(big)) == big


def test_what_is_written_is_json_only() -> None:
    value = {"nan": math.nan, "up": [math.inf], "down": -math.inf, "text": "NaN", "n": 1.5}

    written = json_codec.dumps(value)

    assert json.loads(written) == {
        "nan": None,
        "up": [sys.float_info.max],
        "down": -sys.float_info.max,
        "text": "NaN",
        "n": 1.5,
    }
    assert b"Infinity" not in written
    assert json_codec.dumps({"text": "Infinity"}) == b'{"text":"Infinity"}'


def test_a_backends_document_is_handed_on_as_it_came_unless_it_is_not_json() -> None:
    kept = '{"text": "not a number", "n": 1}'
    assert json_codec.finite(kept) is kept
    assert json.loads(json_codec.finite('{"text": "NaN"}')) == {"text": "NaN"}  # written again
    assert json_codec.finite("not json: NaN") == "not json: NaN"
    assert json_codec.finite('{"a": [NaN, -Infinity]}') == '{"a":[null,-1.7976931348623157e+308]}'
