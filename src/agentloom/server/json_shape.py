"""How deep and how large a JSON body is, read from its bytes before anything parses it.

A body nested a thousand levels deep, or holding millions of values, is refused here in a few
milliseconds of C-speed scanning (bytes methods and numpy), so no recursive code and no parser
ever sees it. The scan does not validate JSON; what it cannot read sensibly the parser refuses.
"""

from __future__ import annotations

import numpy as np

from agentloom.api.limits import RequestLimits
from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen

_STRUCTURE = b'[]{}",'
_OTHER_BYTES = bytes(b for b in range(256) if b not in _STRUCTURE)
_QUOTE, _COMMA = ord('"'), ord(",")
_OPENERS = (ord("["), ord("{"))
_CLOSERS = (ord("]"), ord("}"))


@frozen
class Shape:
    depth: int  # deepest nesting of objects and arrays
    values: int  # objects, arrays and their members (at least the number of them)


def shape(raw: bytes) -> Shape:
    """The shape of the JSON document ``raw``: escapes go first (``\\\\`` then ``\\"``), then
    everything but brackets, commas and quotes; what lies between quotes is string content."""
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    codes = np.frombuffer(raw.translate(None, _OTHER_BYTES), dtype=np.uint8)
    outside = (np.cumsum(codes == _QUOTE, dtype=np.int32) & 1) == 0
    opens = ((codes == _OPENERS[0]) | (codes == _OPENERS[1])) & outside
    closes = ((codes == _CLOSERS[0]) | (codes == _CLOSERS[1])) & outside
    steps = opens.view(np.int8) - closes.view(np.int8)
    depth = int(np.cumsum(steps, dtype=np.int32).max(initial=0))
    values = int(np.count_nonzero(opens) + np.count_nonzero((codes == _COMMA) & outside)) + 1
    return Shape(depth, values)


def _surely_within(raw: bytes, limits: RequestLimits) -> bool:
    """Whether counting brackets alone shows ``raw`` within ``limits`` (most bodies)."""
    opens = raw.count(b"[") + raw.count(b"{")
    return opens <= limits.max_json_depth and opens + raw.count(b",") < limits.max_json_values


def check_shape(raw: bytes, limits: RequestLimits) -> None:
    """Refuse ``raw`` when it is nested deeper or holds more values than ``limits`` allow."""
    if _surely_within(raw, limits):
        return
    found = shape(raw)
    if found.depth > limits.max_json_depth:
        raise InvalidRequestError(
            f"The request body is nested {found.depth} levels deep; at most "
            f"{limits.max_json_depth} levels of objects and arrays are allowed.",
            code="json_too_deep",
        )
    if found.values > limits.max_json_values:
        raise InvalidRequestError(
            f"The request body holds about {found.values} JSON values; at most "
            f"{limits.max_json_values} (objects, arrays and their members) are allowed in one "
            "request.",
            code="json_too_large",
        )
