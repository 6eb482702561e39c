"""Synchronous calls over the async implementation: a private event loop in a worker thread.

Every synchronous call runs its coroutine on one loop the :class:`SyncRunner` owns, in its own
thread, whether or not the calling thread runs an event loop (``asyncio.run`` inside a running
loop is an error, and a loop per call would strand the HTTP clients made on the one before). The
clients a synchronous call makes live on that loop, and are closed on it. A call waits at most
its deadline: past it the coroutine is cancelled and :class:`UpstreamTimeoutError` raised.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Final, TypeVar

from agentloom.errors import UpstreamTimeoutError

__all__ = ["SyncRunner"]

T = TypeVar("T")

_GRACE: Final = 5.0  # seconds past the deadline for the cancelled coroutine to unwind
_STOP: Final = 10.0  # seconds to wait for the loop's thread to end


class SyncRunner:
    """A private event loop in a daemon thread, started on first use."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def started(self) -> bool:
        return self._loop is not None

    def owns_running_loop(self) -> bool:
        """Whether the code asking runs on this runner's loop."""
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False

    def run(self, make: Callable[[], Coroutine[Any, Any, T]], deadline: float) -> T:
        """``make()``'s result, run on the private loop; it may take ``deadline`` seconds."""
        if self.owns_running_loop():
            raise RuntimeError(
                "a synchronous LLM call from inside the LLM's own sync loop would wait for "
                "itself; await the async method (acompletion, aresponses) instead"
            )
        loop = self._started()
        future = asyncio.run_coroutine_threadsafe(_within(make(), deadline), loop)
        try:
            return future.result(timeout=deadline + _GRACE)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise UpstreamTimeoutError(
                f"the model call did not finish within its {deadline:g} s deadline"
            ) from None
        except BaseException:  # KeyboardInterrupt too: the call must not outlive the caller
            future.cancel()
            raise

    def close(self, cleanup: Callable[[], Awaitable[None]] | None = None) -> None:
        """Run ``cleanup`` on the loop (closing what lives there), then stop it and its thread."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        try:
            if cleanup is not None:
                asyncio.run_coroutine_threadsafe(_awaited(cleanup), loop).result(timeout=_STOP)
            asyncio.run_coroutine_threadsafe(loop.shutdown_asyncgens(), loop).result(timeout=_STOP)
        finally:
            loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=_STOP)
        if not thread.is_alive():  # a loop still running cannot be closed; the daemon dies last
            loop.close()

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name=f"agentloom-llm-sync-{self._name}", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop


async def _within(work: Coroutine[Any, Any, T], deadline: float) -> T:
    limit = asyncio.timeout(deadline)
    try:
        async with limit:
            return await work
    except TimeoutError:
        if not limit.expired():
            raise
        raise UpstreamTimeoutError(
            f"the model call did not finish within its {deadline:g} s deadline"
        ) from None


async def _awaited(cleanup: Callable[[], Awaitable[None]]) -> None:
    await cleanup()
