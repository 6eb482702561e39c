"""The hot path's JSON: pydantic-core's speed, the stdlib's results."""

from __future__ import annotations

import json
import math

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
