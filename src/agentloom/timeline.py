"""A response's own trace: a compact timeline of its run, kept with it when it is stored.

Recorded for every response, traces on or off (:mod:`agentloom.tracing` exports spans; this
keeps a few facts of each step for ``GET /v1/responses/{id}/trace``): the run, each model call,
each server tool call, each guardrail check, a compaction. An entry is a name, a kind, its
start and end (``time.perf_counter()``), an error type when it failed and a few typed
attributes; entries are plain objects until the response's final write encodes the whole
timeline once (:meth:`Timeline.encode`). At most :data:`MAX_ENTRIES` are kept (the first
ones); the encoded timeline says when some were left out (``truncated``, and the run's
``dropped_spans``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from operator import attrgetter
from typing import Final, Literal, TypeAlias

from agentloom import json_codec

__all__ = ["MAX_ENTRIES", "AttributeValue", "Entry", "EntryKind", "Timeline", "milliseconds"]

MAX_ENTRIES: Final = 256
EntryKind: TypeAlias = Literal["response", "model_call", "tool_call", "guardrail", "compaction"]
AttributeValue: TypeAlias = str | int | float | bool
Attributes: TypeAlias = dict[str, AttributeValue]


@dataclass(slots=True)
class Entry:
    """One step of a response's run; ``start`` and ``end`` are ``time.perf_counter()``."""

    name: str
    kind: EntryKind
    start: float
    end: float
    attributes: Attributes
    error: str | None = None  # the error's type, when the step failed

    def encoded(self, origin: float) -> dict[str, object]:
        """The entry as the trace endpoint shows it, its times in ms from ``origin``."""
        entry: dict[str, object] = {
            "name": self.name,
            "kind": self.kind,
            "start_ms": milliseconds(self.start - origin),
            "duration_ms": milliseconds(self.end - self.start),
            "status": "ok" if self.error is None else "error",
            "attributes": self.attributes,
        }
        if self.error is not None:
            entry["error"] = self.error
        return entry


class Timeline:
    """The entries of one response's run, from :attr:`started` on."""

    __slots__ = ("_dropped", "_entries", "_limit", "started", "started_at", "trace_id")

    def __init__(self, limit: int = MAX_ENTRIES) -> None:
        self.started = time.perf_counter()
        self.started_at = time.time()
        self.trace_id: str | None = None  # the OpenTelemetry trace the run is part of
        self._entries: list[Entry] = []
        self._limit = limit
        self._dropped = 0

    def add(
        self,
        name: str,
        kind: EntryKind,
        start: float,
        attributes: Attributes,
        error: str | None = None,
    ) -> None:
        """A step that began at ``start`` and ends now."""
        if len(self._entries) >= self._limit:
            self._dropped += 1
            return
        self._entries.append(Entry(name, kind, start, time.perf_counter(), attributes, error))

    @property
    def entries(self) -> list[Entry]:
        return self._entries

    def encode(self, run: Entry) -> str:
        """The timeline as stored (JSON, once): ``run`` (the whole response, ending now)
        first, then the entries in start order."""
        origin = self.started
        entries = sorted(self._entries, key=_START)
        if self._dropped:
            run.attributes["dropped_spans"] = self._dropped
        document: dict[str, object] = {
            "started_at": self.started_at,
            "duration_ms": milliseconds(run.end - origin),
            "truncated": self._dropped > 0,
            "spans": [run.encoded(origin), *(entry.encoded(origin) for entry in entries)],
        }
        if self.trace_id is not None:
            document["trace_id"] = self.trace_id
        return json_codec.dumps(document).decode()


def milliseconds(seconds: float) -> float:
    """``seconds`` in milliseconds, to the microsecond (cheaper than ``round``)."""
    return int(seconds * 1_000_000) / 1000


_START = attrgetter("start")
