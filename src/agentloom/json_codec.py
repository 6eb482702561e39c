"""JSON on the hot path: pydantic-core's parser and encoder (Rust), several times faster than
the stdlib for the small documents every response handles (stream chunks, request bodies sent
upstream, stored rows), with the stdlib's results: integers of any size, ``NaN`` accepted.
"""

from __future__ import annotations

import pydantic_core


def loads(data: str | bytes) -> object:
    """The value of the JSON document ``data``; ``ValueError`` when it is not JSON."""
    return pydantic_core.from_json(data)


def dumps(value: object) -> bytes:
    """``value`` (JSON types only) as compact UTF-8 JSON."""
    return pydantic_core.to_json(value)
