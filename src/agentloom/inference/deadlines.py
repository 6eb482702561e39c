"""A backend's answer under three deadlines: its first piece, the longest silence between two
pieces, and the whole answer. The socket's own read timeout cannot tell these apart (a backend
that trickles a byte a minute never trips it); these count what the provider hands on.

Which deadline passed is named in the :class:`~agentloom.errors.UpstreamTimeoutError` the
caller's ``expired`` makes, so the failed response says what timed out.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

from agentloom.errors import UpstreamTimeoutError

T = TypeVar("T")
Which = Literal["first_byte_timeout", "chunk_timeout", "total_timeout"]
Expired = Callable[[Which, float], UpstreamTimeoutError]


@dataclass(frozen=True, slots=True)
class StreamDeadlines:
    """Seconds: to the first piece, between two pieces, for the whole answer."""

    first_byte: float = 300.0
    between_chunks: float = 120.0
    total: float = 1800.0

    def whole(self) -> StreamDeadlines:
        """For an answer asked for whole (one piece at the end): only the total applies."""
        return StreamDeadlines.only_total(self.total)

    @staticmethod
    def only_total(seconds: float) -> StreamDeadlines:
        return StreamDeadlines(seconds, seconds, seconds)


async def bounded(
    pieces: AsyncGenerator[T, None], deadlines: StreamDeadlines, expired: Expired
) -> AsyncGenerator[T, None]:
    """``pieces``, failing with ``expired(which, seconds)`` when a deadline passes first."""
    loop = asyncio.get_running_loop()
    end = loop.time() + deadlines.total
    which: Which = "first_byte_timeout"
    wait = deadlines.first_byte
    try:
        while True:
            limit = min(loop.time() + wait, end)
            named, seconds = (which, wait) if limit < end else ("total_timeout", deadlines.total)
            try:
                async with asyncio.timeout_at(limit) as scope:
                    piece = await anext(pieces)
            except StopAsyncIteration:
                return
            except TimeoutError:
                if not scope.expired():
                    raise
                raise expired(named, seconds) from None
            yield piece
            which, wait = "chunk_timeout", deadlines.between_chunks
    finally:
        await pieces.aclose()
