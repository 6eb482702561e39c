"""A prompt-injection heuristic: weighted cues, summed; at or past the threshold, a violation.

Strong cues ("ignore all previous instructions", "reveal your system prompt") weigh 1 and flag
on their own at the default threshold; weak ones ("you are now", "developer mode") weigh 0.5 and
flag only together. Text that merely mentions instructions matches nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from agentloom.frozen import frozen
from agentloom.safety.base import Violation


@frozen
class Cue:
    name: str
    pattern: re.Pattern[str]
    weight: float


def _cue(name: str, pattern: str, weight: float) -> Cue:
    return Cue(name, re.compile(pattern, re.IGNORECASE), weight)


_PRIOR = r"(?:all\s+|any\s+|the\s+|your\s+|of\s+)*(?:previous|prior|above|earlier|preceding)"
_RULES = r"(?:instructions?|prompts?|rules|directions|guidelines|context|messages?)"
_SECRET_PROMPT = r"(?:system|initial|original|hidden|developer)\s+(?:prompt|instructions?|message)"

CUES: Final[tuple[Cue, ...]] = (
    _cue(
        "ignore previous instructions",
        rf"\b(?:ignore|disregard|forget|skip)\s+{_PRIOR}\s+{_RULES}",
        1.0,
    ),
    _cue(
        "override instructions",
        rf"\b(?:override|bypass)\s+(?:your|the|all)\s+(?:{_RULES}|safety|filters?)",
        1.0,
    ),
    _cue(
        "reveal the system prompt",
        r"\b(?:reveal|show|print|repeat|output|leak|display)\s+(?:me\s+)?(?:your|the)\s+"
        + _SECRET_PROMPT,
        1.0,
    ),
    _cue("new instructions", r"(?:^|\n)\s*(?:new|updated|real)\s+instructions\s*:", 0.5),
    _cue("role reassignment", r"\byou\s+are\s+now\b", 0.5),
    _cue("pretend", r"\b(?:pretend|act\s+as\s+if)\s+(?:to\s+be|you\s+are|you\s+have)\b", 0.5),
    _cue("jailbreak mode", r"\b(?:developer|god|jailbreak|dan)\s+mode\b|\b(?-i:DAN)\b", 0.5),
    _cue(
        "no restrictions",
        r"\b(?:no|without|free\s+of\s+(?:all|any))\s+(?:restrictions|limitations|filters|rules)\b",
        0.5,
    ),
    _cue(
        "fake system turn",
        r"(?:^|\n)\s*(?:system|\[system\]|<\|im_start\|>system)\s*:",
        0.5,
    ),
)


def prompt_injection(text: str, threshold: float = 1.0) -> Iterator[Violation]:
    """One violation when the weights of the distinct cues found reach ``threshold``."""
    found = [(cue, match) for cue in CUES if (match := cue.pattern.search(text))]
    total = sum(cue.weight for cue, _ in found)
    if found and total >= threshold:
        names = ", ".join(cue.name for cue, _ in found)
        first = min(match.start() for _, match in found)
        last = max(match.end() for _, match in found)
        yield Violation(
            "prompt_injection",
            f"likely prompt injection ({names})",
            score=min(1.0, total / (2 * threshold)),
            span=(first, last),
        )
