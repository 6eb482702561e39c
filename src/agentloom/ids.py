"""Object ids in OpenAI's style: a type prefix and 24 random bytes in hex.

The bytes come from the operating system's CSPRNG, fetched a few kilobytes at a time: one
``getrandom`` call per id cost about 4% of a request's CPU.
"""

from __future__ import annotations

import os
import threading

_ID_BYTES = 24
_BATCH = 170 * _ID_BYTES

_pool = b""
_offset = 0
_lock = threading.Lock()


def _random_hex() -> str:
    global _pool, _offset
    with _lock:
        if _offset + _ID_BYTES > len(_pool):
            _pool, _offset = os.urandom(_BATCH), 0
        start, _offset = _offset, _offset + _ID_BYTES
        return _pool[start : start + _ID_BYTES].hex()


def new_id(prefix: str, *, separator: str = "_") -> str:
    """``resp_<hex>``; files take OpenAI's ``file-<hex>`` (``separator="-"``)."""
    return f"{prefix}{separator}{_random_hex()}"
