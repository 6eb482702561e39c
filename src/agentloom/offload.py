"""CPU-heavy work kept off the event loop, but only when it is large.

Parsing a large body, turning thousands of items into chat messages or encoding them for a
backend or a store would hold up every other request if done on the event loop; a small amount
of the same work costs less than the hop to a worker thread. Each caller says what "large" is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, TypeVarTuple

import anyio.to_thread

T = TypeVar("T")
Args = TypeVarTuple("Args")


async def off_loop(large: bool, work: Callable[[*Args], T], *args: *Args) -> T:
    """``work(*args)``: in a worker thread when ``large``, else right here."""
    if not large:
        return work(*args)
    return await anyio.to_thread.run_sync(work, *args)
