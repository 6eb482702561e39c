"""A backend's answer under three deadlines: its first piece, the longest silence between two
pieces, and the whole answer. The socket's own read timeout cannot tell these apart (a backend
that trickles a byte a minute never trips it); these count what the provider hands on.

Which deadline passed is named in the :class:`~agentloom.errors.UpstreamTimeoutError` the
caller's ``expired`` makes, so the failed response says what timed out.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncGenerator, Callable
from typing import Literal, TypeVar

from agentloom.errors import UpstreamTimeoutError
from agentloom.frozen import frozen

T = TypeVar("T")
Which = Literal["first_byte_timeout", "chunk_timeout", "total_timeout"]
Expired = Callable[[Which, float], UpstreamTimeoutError]


@frozen
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


class Within:
    """``asyncio.timeout(seconds)``'s work for a wait that nearly always ends in time, at a
    fraction of its cost (one timer, no states, no coroutines to enter and leave: a request
    waits under three of them): past ``seconds`` the task is cancelled, and the block ends in
    :class:`TimeoutError` (:meth:`expired` says it was this limit's). A cancellation of the
    task from elsewhere passes through as it came. ``with``, not ``async with``."""

    __slots__ = ("_cancelling", "_seconds", "_task", "_timer", "fired")

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds
        self._task: asyncio.Task[object] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._cancelling = 0
        self.fired = False

    def __enter__(self) -> Within:
        task = self._task = asyncio.current_task()
        assert task is not None, "a limit is for a task's waits"
        self._cancelling = task.cancelling()
        self._timer = task.get_loop().call_later(self._seconds, self._fire)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, _: object
    ) -> None:
        assert self._timer is not None, "entered first"
        assert self._task is not None, "entered first"
        self._timer.cancel()
        if not self.fired:
            return
        # as asyncio.timeout: this limit's cancellation is taken back; a CancelledError with
        # no other one asked for is this limit's
        alone = self._task.uncancel() <= self._cancelling
        if alone and kind is asyncio.CancelledError:
            raise TimeoutError from error

    def expired(self) -> bool:
        """Whether the limit passed (and cancelled the wait)."""
        return self.fired

    def _fire(self) -> None:
        assert self._task is not None, "entered first"
        self.fired = True
        self._task.cancel()


class _Watch:
    """One timer for all the waits of a stream (a timer per wait cost ~5 us a piece, most of a
    token's handling): it fires at a wait's limit, or later, and cancels the task only if it
    finds a wait past its limit; a wait that ends in time just leaves it to fire for the next."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        self._limit = math.inf  # of the wait under way; inf: none is
        self._timer: asyncio.TimerHandle | None = None
        self.fired = False

    def waiting(self, limit: float) -> None:
        self._limit = limit
        if self._timer is not None and self._timer.when() > limit:
            self._timer.cancel()
            self._timer = None
        if self._timer is None:
            self._timer = self._loop.call_at(limit, self._check)

    def done(self) -> None:
        self._limit = math.inf

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def _check(self) -> None:
        self._timer = None
        if self._limit == math.inf or self._task is None:
            return  # no wait under way: the next one sets the timer again
        if self._loop.time() < self._limit:
            self._timer = self._loop.call_at(self._limit, self._check)
            return
        self.fired = True
        self._task.cancel()


class Deadline:
    """One deadline over the waits of a run that is not a stream of its own (the agent loop's
    response budget): one timer, no generator around the run. The caller marks where it waits
    (:meth:`waiting`, :meth:`done`); the task is cancelled only while it waits, once the
    deadline has passed, and :meth:`expired` tells that cancellation from any other."""

    __slots__ = ("_due", "_loop", "_task", "_timer", "_waiting", "fired")

    def __init__(self, seconds: float | None) -> None:
        """``seconds``: ``None`` for no deadline (then nothing is ever cancelled)."""
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        self._waiting = False
        self._due = False  # the deadline passed (while the task did something else)
        self.fired = False
        self._timer: asyncio.Handle | None = None
        if seconds is not None:
            self._timer = self._loop.call_later(seconds, self._passed)

    def waiting(self) -> None:
        self._waiting = True
        if self._due and self._timer is None:  # passed meanwhile: cancel the wait now
            self._timer = self._loop.call_soon(self._check)

    def done(self) -> None:
        self._waiting = False

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def expired(self) -> bool:
        """Whether a cancellation the waiting task got was this deadline's (and only its)."""
        return self.fired and self._task is not None and self._task.uncancel() == 0

    def _passed(self) -> None:
        self._due = True
        self._check()

    def _check(self) -> None:
        self._timer = None
        if self._waiting and self._task is not None and not self.fired:
            self.fired = True
            self._task.cancel()


async def bounded(
    pieces: AsyncGenerator[T, None], deadlines: StreamDeadlines, expired: Expired
) -> AsyncGenerator[T, None]:
    """``pieces``, failing with ``expired(which, seconds)`` when a deadline passes first (the
    time the consumer takes between two pieces is not counted)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + deadlines.total
    which: Which = "first_byte_timeout"
    wait = deadlines.first_byte
    watch = _Watch()
    try:
        while True:
            limit = min(loop.time() + wait, end)
            named, seconds = (which, wait) if limit < end else ("total_timeout", deadlines.total)
            watch.waiting(limit)
            try:
                piece = await anext(pieces)
            except StopAsyncIteration:
                return
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if watch.fired and task is not None and task.uncancel() == 0:
                    raise expired(named, seconds) from None
                raise
            watch.done()
            yield piece
            which, wait = "chunk_timeout", deadlines.between_chunks
    finally:
        watch.close()
        await pieces.aclose()
