"""A block no outer cancel scope interrupts, at the cost of a shield only where one is needed.

``anyio.CancelScope(shield=True)`` keeps an outer anyio scope's cancellation (a task group's,
a stream's client gone) out of the block. A task no anyio scope holds (the request task of a
collected reply: uvicorn starts it, nothing in anyio cancels it) has nothing to be shielded
from, and asyncio's own ``Task.cancel()`` passes any shield: there the scope is pure cost
(about 3% of a stored response's instructions: its backend found through sniffio, a task state
made and kept in a weak dictionary, its enter and exit). :func:`shielded` gives the shield to a
task in an anyio scope, and a block with nothing around it to a task in none.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import anyio

__all__ = ["shielded"]

_NOTHING = contextlib.nullcontext()


def _scope_finder() -> Callable[[asyncio.Task[Any]], bool]:
    """Whether an anyio cancel scope holds a task: anyio's asyncio backend keeps each task's
    innermost scope in a (private) table; without that table every task counts as held."""
    try:
        from anyio._backends._asyncio import _task_states
    except ImportError:  # pragma: no cover - another anyio: shield always
        return lambda task: True

    def held(task: asyncio.Task[Any]) -> bool:
        state = _task_states.get(task)
        # (a state without the attribute, another anyio's: held, so shielded)
        return state is not None and getattr(state, "cancel_scope", True) is not None

    return held


_held = _scope_finder()


def shielded() -> AbstractContextManager[object]:
    """``with shielded():`` a block an outer anyio scope's cancellation does not interrupt
    (it lands when the block ends, as under ``anyio.CancelScope(shield=True)``)."""
    task = asyncio.current_task()
    if task is not None and not _held(task):
        return _NOTHING
    return anyio.CancelScope(shield=True)
