"""Object ids in OpenAI's style: a type prefix and 24 bytes in hex, the first 6 the creation
time (seconds and 1/65536ths of one, big-endian), the other 18 random.

OpenAI's ids start with the creation second the same way. Ids that grow with time land at the
end of every index on them (``responses.id``, ``items.id``, conversations, files ...) instead of
on a random page of it: a stored response writes fewer pages, and a cache holds the ones it
writes. The random bytes come from the operating system's CSPRNG, fetched a few kilobytes at a
time: one ``getrandom`` call per id cost about 4% of a request's CPU.
"""

from __future__ import annotations

import os
import threading
import time

_RANDOM_BYTES = 18
_BATCH = 170 * _RANDOM_BYTES
_TICKS = 65536  # of a second, in the time part

_pool = b""
_offset = 0
_lock = threading.Lock()


def _random_hex() -> str:
    global _pool, _offset
    with _lock:
        if _offset + _RANDOM_BYTES > len(_pool):
            _pool, _offset = os.urandom(_BATCH), 0
        start, _offset = _offset, _offset + _RANDOM_BYTES
        return _pool[start : start + _RANDOM_BYTES].hex()


def new_id(prefix: str, *, separator: str = "_") -> str:
    """``resp_<hex>``; files take OpenAI's ``file-<hex>`` (``separator="-"``)."""
    ticks = int(time.time() * _TICKS) & 0xFFFF_FFFF_FFFF
    return f"{prefix}{separator}{ticks:012x}{_random_hex()}"
