"""Parsing the labelled text protocols of models without native tool calling.

A reply is split into sections at lines that start with a label (``Thought:``, ``Action:``,
``TOOL:`` ...), case-insensitively, tolerating Markdown decoration (``**Action:**``, ``- Tool:``,
``### Final Answer:``). The first tool label or final-answer label decides what the reply is:

- a tool request: the tool's name (first line of its section) and the JSON of the input
  section that follows it (code fences removed, text around the object ignored; ``{}`` when
  there is none);
- a final answer: everything after its label;
- malformed: neither label (the agent answers with a corrective observation).

A made-up observation after the input (a model without stop sequences writing the tool's
answer itself) is ignored: it starts a new section.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Literal, TypeAlias

from agentloom.frozen import frozen

__all__ = [
    "FinalAnswer",
    "Labels",
    "Malformed",
    "ParsedReply",
    "Section",
    "ToolRequest",
    "extract_json",
    "parse_reply",
    "split_sections",
]

Kind = Literal["thought", "tool", "input", "final", "observation"]
_KINDS: tuple[Kind, ...] = ("input", "final", "observation", "thought", "tool")  # match order


@frozen
class Labels:
    """The label spellings of one protocol: regular expressions (case-insensitive) per kind."""

    thought: str
    tool: str
    input: str
    final: str
    observation: str = r"observations?"

    def pattern(self) -> re.Pattern[str]:
        groups = "|".join(f"(?P<{kind}>{getattr(self, kind)})" for kind in _KINDS)
        decoration = r"[ \t>*_#`-]*"
        return re.compile(
            rf"^{decoration}(?:{groups})[ \t*_`]*:[ \t*_`]*", re.IGNORECASE | re.MULTILINE
        )


@frozen
class Section:
    kind: Kind
    body: str
    start: int  # where the body starts in the text


@frozen
class ToolRequest:
    name: str
    arguments: str  # JSON text, as the model wrote it once cleaned (may be invalid)
    thought: str = ""
    type: Literal["tool"] = "tool"


@frozen
class FinalAnswer:
    answer: str
    thought: str = ""
    type: Literal["final"] = "final"


@frozen
class Malformed:
    problem: str
    type: Literal["malformed"] = "malformed"


ParsedReply: TypeAlias = ToolRequest | FinalAnswer | Malformed


def split_sections(text: str, pattern: re.Pattern[str]) -> list[Section]:
    """The labelled sections of ``text``, in order (text before the first label is dropped)."""
    matches = list(pattern.finditer(text))
    sections: list[Section] = []
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        kind = next(k for k in _KINDS if match.group(k) is not None)
        sections.append(Section(kind, text[match.end() : end].strip(), match.end()))
    return sections


def parse_reply(text: str, labels: Labels) -> ParsedReply:
    """What a model's reply asks for, under ``labels``' protocol."""
    sections = split_sections(text, labels.pattern())
    decisive = next((i for i, s in enumerate(sections) if s.kind in ("tool", "final")), None)
    if decisive is None:
        return Malformed("the reply has neither a tool line nor a final answer line")
    section = sections[decisive]
    thought = _thought(sections[:decisive])
    if section.kind == "final":
        return FinalAnswer(text[section.start :].strip(), thought)
    name = _tool_name(section.body)
    if not name:
        return Malformed("the tool line does not name a tool")
    return ToolRequest(name, _input(sections[decisive + 1 :]), thought)


def extract_json(body: str) -> str:
    """The JSON value in ``body``: code fences removed, and if the whole is not JSON, the first
    object found in it; otherwise the cleaned text (left for the executor to reject)."""
    cleaned = _unfence(body)
    if not cleaned:
        return "{}"
    try:
        json.loads(cleaned)
    except json.JSONDecodeError:
        start = cleaned.find("{")
        if start >= 0:
            try:
                _, end = json.JSONDecoder().raw_decode(cleaned, start)
            except json.JSONDecodeError:
                return cleaned
            return cleaned[start:end]
    return cleaned


_FENCE = re.compile(r"^```[\w-]*[ \t]*\n?(.*?)\n?```", re.DOTALL)


def _unfence(body: str) -> str:
    body = body.strip()
    fenced = _FENCE.match(body)
    if fenced is not None:
        return fenced.group(1).strip()
    return body.strip("`").strip()


def _tool_name(body: str) -> str:
    first = body.strip().splitlines()[0] if body.strip() else ""
    name = first.strip().strip("`*'\"[]<>").strip()
    return name.removesuffix("()").strip()


def _input(after: Sequence[Section]) -> str:
    """The tool's input: the first input section before the next tool, answer or observation."""
    for section in after:
        if section.kind == "input":
            return extract_json(section.body)
        if section.kind != "thought":
            break
    return "{}"


def _thought(sections: Sequence[Section]) -> str:
    thoughts = [s.body for s in sections if s.kind == "thought"]
    return thoughts[-1] if thoughts else ""
