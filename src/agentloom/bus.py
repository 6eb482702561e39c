"""A small synchronous event bus: the SDK's telemetry (model calls, agent steps) goes here.

Handlers are called in subscription order, on the emitter's task; a handler that raises is
logged and does not stop the others or the emitter (telemetry must never break an agent).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

__all__ = ["EventBus", "Handler", "default_bus"]

log = logging.getLogger(__name__)

E = TypeVar("E")
Handler = Callable[[object], None]


class EventBus:
    def __init__(self) -> None:
        self._handlers: list[tuple[type[object], Callable[[object], None]]] = []

    def subscribe(self, handler: Callable[[E], None], kind: type[E]) -> Callable[[], None]:
        """Call ``handler`` with every emitted event of type ``kind``; returns an unsubscribe."""
        entry: tuple[type[object], Callable[[object], None]] = (kind, handler)  # type: ignore[assignment]
        self._handlers.append(entry)

        def unsubscribe() -> None:
            if entry in self._handlers:
                self._handlers.remove(entry)

        return unsubscribe

    def emit(self, event: object) -> None:
        for kind, handler in tuple(self._handlers):
            if isinstance(event, kind):
                try:
                    handler(event)
                except Exception:  # a broken telemetry handler must not break the caller
                    log.exception("event handler %r failed on %s", handler, type(event).__name__)


_DEFAULT = EventBus()


def default_bus() -> EventBus:
    """The process-wide bus used when an LLM or agent is not given one."""
    return _DEFAULT
