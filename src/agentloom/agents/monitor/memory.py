"""The ``memory_extraction`` axis: what a monitor keeps from each tick, and how it is recalled.

After every tick the memory reads the tick's trace (its input, its tools' observations, its
report) and returns the new memory, kept as JSON in the session's state under its ``key``. Its
:meth:`~MemoryExtraction.entries` are what the retrieval axis chooses from at the start of the
next tick: each a text to match and a detail shown with it.

- ``causality_graph``: one model call per tick lists the cause-and-effect links the trace gives
  evidence for (at most 10). They are edges of a graph: the model is shown the names already in
  it so it reuses them, and an edge seen again keeps its highest confidence and adds the tick to
  its sightings. The graph keeps its 100 most recently seen edges; an edge is recalled as
  ``cause -> effect (confidence 0.8; ticks 2, 5)``. A tick with under 50 characters of
  observations and report is not sent.
- ``scratchpad``: one model call per tick rewrites the monitor's scratchpad, a page of short
  working notes (at most 3000 characters), from the pad as it was and the tick's trace: it keeps
  what still holds, adds what the tick found and drops what the tick disproved. Each line of the
  pad is an entry, recalled as ``<line> (scratchpad, tick <n>)``. A tick with under 50
  characters of observations and report is not sent; an empty reply keeps the pad as it was.
- ``structured_json``: one model call per tick answers a JSON object of findings, each a short
  key (``checkout_error_rate``) and a JSON value; the model is shown the findings kept so far
  so it reuses their keys. A key given again replaces its value (``null`` forgets it); the 100
  most recently set keys are kept, each recalled as ``<key>: <value as JSON> (tick <n>)``. The
  same 50-character rule as above.
- ``notes``: no model call; each tick's report (its first 300 characters) is a note, the latest
  50 kept, recalled as ``<report> (tick <n>)``.
- ``none``: nothing is kept, no model call; there is nothing to recall.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Final, Protocol, TypeGuard

from agentloom.agents.base import ToolOutcome
from agentloom.agents.monitor.side import SideModel, json_reply
from agentloom.agents.saved_history import SessionDataError
from agentloom.frozen import frozen
from agentloom.json_types import JSONObject, JSONValue
from agentloom.text import clip

__all__ = [
    "MEMORY_EXTRACTIONS",
    "CausalEdge",
    "CausalityGraph",
    "MemoryEntry",
    "MemoryExtraction",
    "NoMemory",
    "Notes",
    "Scratchpad",
    "StructuredJson",
    "TickTrace",
]

OBSERVATION_CHARS: Final = 1500  # of each observation, shown to the extracting model
TRACE_CHARS: Final = 8000
MIN_CHARS: Final = 50
PER_TICK: Final = 10
MAX_EDGES: Final = 100
KNOWN_NAMES: Final = 40
SIGHTINGS: Final = 5  # ticks remembered per edge
NAME_CHARS: Final = 120
NOTE_CHARS: Final = 300
MAX_NOTES: Final = 50
PAD_CHARS: Final = 3000
MAX_FINDINGS: Final = 100
KEY_CHARS: Final = 80
VALUE_CHARS: Final = 500  # of a finding's value as JSON

CAUSALITY_INSTRUCTIONS: Final = (
    "You keep a cause-and-effect graph of what you monitor. Read the record of one work session "
    "and list the causal links it gives evidence for: one thing leading to, causing, "
    "triggering or explaining another. Name each cause and each effect with a short noun "
    "phrase; when you mean something already in the graph, use its exact name from the list of "
    "known names. Reply with a JSON array only, each item "
    '{"cause": "...", "effect": "...", "confidence": <a number from 0 to 1>}; reply [] when '
    "the record shows no causal link."
)


@frozen
class TickTrace:
    """What one tick did, for a memory to learn from."""

    number: int
    input: str
    observations: tuple[ToolOutcome, ...]
    report: str

    @property
    def substance(self) -> int:
        """Characters of observations and report."""
        return len(self.report) + sum(len(o.output) for o in self.observations)

    def render(self) -> str:
        seen = [f"[{o.name}] {clip(o.output, OBSERVATION_CHARS)}" for o in self.observations]
        parts = [f"Tick {self.number}: {self.input}"]
        if seen:
            parts.append("Observations:\n" + "\n".join(seen))
        parts.append(f"Report:\n{self.report or '(none)'}")
        return clip("\n\n".join(parts), TRACE_CHARS)


@frozen
class MemoryEntry:
    """One thing to recall: ``text`` is what retrieval matches, ``detail`` is only shown."""

    text: str
    detail: str = ""

    @property
    def line(self) -> str:
        return f"{self.text} ({self.detail})" if self.detail else self.text


class MemoryExtraction(Protocol):
    """Learns from each tick; ``key`` names its slot in the session's state."""

    @property
    def key(self) -> str: ...

    async def extract(self, trace: TickTrace, memory: JSONValue, side: SideModel) -> JSONValue:
        """The memory after ``trace`` (``memory``: as saved, ``None`` before the first)."""
        ...

    def entries(self, memory: JSONValue) -> list[MemoryEntry]:
        """The memory as entries to recall, oldest first."""
        ...


# --- causality_graph -------------------------------------------------------------------------


@frozen
class CausalEdge:
    cause: str
    effect: str
    confidence: float
    ticks: tuple[int, ...]  # the ticks that saw it, oldest first

    @property
    def ends(self) -> tuple[str, str]:
        return _name_key(self.cause), _name_key(self.effect)

    def seen_again(self, other: CausalEdge) -> CausalEdge:
        ticks = tuple(dict.fromkeys((*self.ticks, *other.ticks)))[-SIGHTINGS:]
        return CausalEdge(self.cause, self.effect, max(self.confidence, other.confidence), ticks)

    def entry(self) -> MemoryEntry:
        ticks = ", ".join(map(str, self.ticks))
        label = "tick" if len(self.ticks) == 1 else "ticks"
        detail = f"confidence {self.confidence:.1f}; {label} {ticks}"
        return MemoryEntry(f"{self.cause} -> {self.effect}", detail)

    def to_json(self) -> JSONObject:
        return {
            "cause": self.cause,
            "effect": self.effect,
            "confidence": self.confidence,
            "ticks": list(self.ticks),
        }

    @classmethod
    def from_json(cls, value: JSONValue) -> CausalEdge:
        if not isinstance(value, dict):
            raise _malformed("causality_graph")
        cause, effect = value.get("cause"), value.get("effect")
        confidence, ticks = value.get("confidence"), value.get("ticks")
        if not (isinstance(cause, str) and isinstance(effect, str) and _is_number(confidence)):
            raise _malformed("causality_graph")
        if not isinstance(ticks, list):
            raise _malformed("causality_graph")
        numbers = tuple(t for t in ticks if isinstance(t, int))
        if len(numbers) != len(ticks):
            raise _malformed("causality_graph")
        return cls(cause, effect, float(confidence), numbers)


class CausalityGraph:
    """Cause-and-effect links extracted by the model, merged into a graph (module doc)."""

    key = "monitor.causality_graph"

    async def extract(self, trace: TickTrace, memory: JSONValue, side: SideModel) -> JSONValue:
        edges = graph_edges(memory)
        if trace.substance < MIN_CHARS:
            return _graph_json(edges)
        reply = await side.ask(CAUSALITY_INSTRUCTIONS, _causality_request(trace, edges))
        found = _relations(json_reply(reply), trace.number)
        return _graph_json(merged(edges, found))

    def entries(self, memory: JSONValue) -> list[MemoryEntry]:
        return [edge.entry() for edge in graph_edges(memory)]


def graph_edges(memory: JSONValue) -> list[CausalEdge]:
    """The edges of a stored graph, least recently seen first."""
    if memory is None:
        return []
    edges = memory.get("edges") if isinstance(memory, dict) else None
    if not isinstance(edges, list):
        raise _malformed("causality_graph")
    return [CausalEdge.from_json(edge) for edge in edges]


def merged(edges: Sequence[CausalEdge], found: Sequence[CausalEdge]) -> list[CausalEdge]:
    """``edges`` with ``found`` added: an edge seen again moves to the end (the most recent);
    the least recently seen go beyond ``MAX_EDGES``."""
    graph = {edge.ends: edge for edge in edges}
    for edge in found:
        before = graph.pop(edge.ends, None)
        graph[edge.ends] = before.seen_again(edge) if before else edge
    return list(graph.values())[-MAX_EDGES:]


def _graph_json(edges: Sequence[CausalEdge]) -> JSONObject:
    return {"edges": [edge.to_json() for edge in edges]}


def _causality_request(trace: TickTrace, edges: Sequence[CausalEdge]) -> str:
    names = list(dict.fromkeys(n for e in reversed(edges) for n in (e.cause, e.effect)))
    known = "\n".join(f"- {name}" for name in names[:KNOWN_NAMES]) or "(none yet)"
    return f"Known names:\n{known}\n\nThe record:\n{trace.render()}"


def _relations(reply: JSONValue, tick: int) -> list[CausalEdge]:
    """The well-formed links of the model's reply (at most ``PER_TICK``); others are skipped."""
    if not isinstance(reply, list):
        return []
    links = [_relation(item, tick) for item in reply]
    return [link for link in links if link is not None][:PER_TICK]


def _relation(item: JSONValue, tick: int) -> CausalEdge | None:
    if not isinstance(item, dict):
        return None
    cause, effect = _name(item.get("cause")), _name(item.get("effect"))
    if not cause or not effect:
        return None
    given = item.get("confidence")
    confidence = min(max(float(given), 0.0), 1.0) if _is_number(given) else 0.5
    return CausalEdge(cause, effect, confidence, (tick,))


def _name(value: JSONValue) -> str:
    return clip(value, NAME_CHARS, squash=True) if isinstance(value, str) else ""


def _name_key(name: str) -> str:
    return " ".join(name.casefold().split())


def _is_number(value: JSONValue) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


# --- notes -----------------------------------------------------------------------------------


@frozen
class Note:
    tick: int
    text: str

    @classmethod
    def from_json(cls, value: JSONValue) -> Note:
        if not isinstance(value, dict):
            raise _malformed("notes")
        tick, text = value.get("tick"), value.get("text")
        if not isinstance(tick, int) or not isinstance(text, str):
            raise _malformed("notes")
        return cls(tick, text)


class Notes:
    """Each tick's report as a note, no model call (module doc)."""

    key = "monitor.notes"

    async def extract(self, trace: TickTrace, memory: JSONValue, side: SideModel) -> JSONValue:
        notes = _notes(memory)
        if trace.report.strip():
            notes.append(Note(trace.number, clip(trace.report, NOTE_CHARS, squash=True)))
        return [{"tick": note.tick, "text": note.text} for note in notes[-MAX_NOTES:]]

    def entries(self, memory: JSONValue) -> list[MemoryEntry]:
        return [MemoryEntry(note.text, f"tick {note.tick}") for note in _notes(memory)]


def _notes(memory: JSONValue) -> list[Note]:
    if memory is None:
        return []
    if not isinstance(memory, list):
        raise _malformed("notes")
    return [Note.from_json(note) for note in memory]


def _malformed(choice: str) -> SessionDataError:
    return SessionDataError(f"the saved state's monitor memory ({choice}) is malformed")


# --- scratchpad ------------------------------------------------------------------------------

SCRATCHPAD_INSTRUCTIONS: Final = (
    "You keep a scratchpad of working notes for a long-running task: short lines, one finding, "
    "lead or open question each. Read your scratchpad and the record of your latest work "
    "session, and reply with the whole updated scratchpad: keep what still holds, add what the "
    "session found, drop what it disproved or made irrelevant. At most 3000 characters. Reply "
    "with the scratchpad's lines only."
)


class Scratchpad:
    """A page of working notes the model rewrites after each tick (module doc)."""

    key = "monitor.scratchpad"

    async def extract(self, trace: TickTrace, memory: JSONValue, side: SideModel) -> JSONValue:
        pad = _pad(memory)
        if trace.substance < MIN_CHARS:
            return memory
        reply = await side.ask(SCRATCHPAD_INSTRUCTIONS, _pad_request(trace, pad))
        lines = [line.strip() for line in reply.strip().splitlines() if line.strip()]
        if not lines:
            return memory
        return {"text": clip("\n".join(lines), PAD_CHARS), "tick": trace.number}

    def entries(self, memory: JSONValue) -> list[MemoryEntry]:
        pad = _pad(memory)
        if pad is None:
            return []
        text, tick = pad
        detail = f"scratchpad, tick {tick}"
        lines = (line.strip().lstrip("-*• ").strip() for line in text.splitlines())
        return [MemoryEntry(line, detail) for line in lines if line]


def _pad(memory: JSONValue) -> tuple[str, int] | None:
    if memory is None:
        return None
    text = memory.get("text") if isinstance(memory, dict) else None
    tick = memory.get("tick") if isinstance(memory, dict) else None
    if not isinstance(text, str) or not isinstance(tick, int):
        raise _malformed("scratchpad")
    return text, tick


def _pad_request(trace: TickTrace, pad: tuple[str, int] | None) -> str:
    written = pad[0] if pad else "(empty)"
    return f"Your scratchpad:\n{written}\n\nThe record:\n{trace.render()}"


# --- structured_json -------------------------------------------------------------------------

STRUCTURED_INSTRUCTIONS: Final = (
    "You keep the findings of a long-running task as structured data: a JSON object whose keys "
    "are short snake_case names of what was found and whose values are JSON (a number, a "
    "string, a list or an object). Read the findings kept so far and the record of your latest "
    "work session, and reply with a JSON object of the findings the session adds or changes "
    "only: reuse a kept key to update its value, give null to forget a key that no longer "
    "holds. Reply {} when the session found nothing new."
)


@frozen
class Finding:
    key: str
    value: JSONValue
    tick: int

    def entry(self) -> MemoryEntry:
        shown = clip(json.dumps(self.value, ensure_ascii=False), VALUE_CHARS)
        return MemoryEntry(f"{self.key}: {shown}", f"tick {self.tick}")

    def to_json(self) -> JSONObject:
        return {"key": self.key, "value": self.value, "tick": self.tick}

    @classmethod
    def from_json(cls, value: JSONValue) -> Finding:
        if not isinstance(value, dict) or "value" not in value:
            raise _malformed("structured_json")
        key, tick = value.get("key"), value.get("tick")
        if not isinstance(key, str) or not isinstance(tick, int):
            raise _malformed("structured_json")
        return cls(key, value["value"], tick)


class StructuredJson:
    """Findings as keyed JSON values, updated by the model after each tick (module doc)."""

    key = "monitor.structured_json"

    async def extract(self, trace: TickTrace, memory: JSONValue, side: SideModel) -> JSONValue:
        kept = {finding.key: finding for finding in _findings(memory)}
        if trace.substance < MIN_CHARS:
            return memory
        reply = json_reply(await side.ask(STRUCTURED_INSTRUCTIONS, _findings_request(trace, kept)))
        for key, value in reply.items() if isinstance(reply, dict) else ():
            name = clip(key, KEY_CHARS, squash=True)
            kept.pop(name, None)
            if value is not None and name:
                kept[name] = Finding(name, value, trace.number)
        findings = list(kept.values())[-MAX_FINDINGS:]
        return {"findings": [finding.to_json() for finding in findings]}

    def entries(self, memory: JSONValue) -> list[MemoryEntry]:
        return [finding.entry() for finding in _findings(memory)]


def _findings(memory: JSONValue) -> list[Finding]:
    if memory is None:
        return []
    findings = memory.get("findings") if isinstance(memory, dict) else None
    if not isinstance(findings, list):
        raise _malformed("structured_json")
    return [Finding.from_json(finding) for finding in findings]


def _findings_request(trace: TickTrace, kept: dict[str, Finding]) -> str:
    shown = {key: finding.value for key, finding in kept.items()}
    findings = json.dumps(shown, ensure_ascii=False, indent=1) if shown else "{}"
    return f"Findings so far:\n{findings}\n\nThe record:\n{trace.render()}"


# --- none ------------------------------------------------------------------------------------


class NoMemory:
    """Keeps nothing: every tick starts with no recollection."""

    key = "monitor.none"

    async def extract(self, trace: TickTrace, memory: JSONValue, side: SideModel) -> JSONValue:
        return None

    def entries(self, memory: JSONValue) -> list[MemoryEntry]:
        return []


MEMORY_EXTRACTIONS: dict[str, Callable[[], MemoryExtraction]] = {
    "causality_graph": CausalityGraph,
    "scratchpad": Scratchpad,
    "structured_json": StructuredJson,
    "none": NoMemory,
    "notes": Notes,
}
