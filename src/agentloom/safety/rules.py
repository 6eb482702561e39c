"""The ``rules`` shield: blocklists, regular expressions, PII and secret detectors and a
prompt-injection heuristic, in-process, no model.

Which detectors run is configured; the prompt-injection heuristic looks at what users and tools
say (the model's own answers discuss such phrases legitimately). Long texts are scanned in a
worker thread so the event loop keeps serving.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Final

import anyio.to_thread

from agentloom.frozen import frozen
from agentloom.safety import pii
from agentloom.safety.base import Role, ShieldKind, Verdict, Violation
from agentloom.safety.injection import prompt_injection
from agentloom.safety.settings import (
    BlocklistSettings,
    DetectorName,
    PatternSettings,
    RulesShieldSettings,
)

PII_DETECTORS: Final[dict[DetectorName, pii.Detector]] = {
    "email": pii.emails,
    "phone": pii.phones,
    "credit_card": pii.credit_cards,
    "iban": pii.ibans,
    "api_key": pii.api_keys,
    "private_key": pii.private_keys,
}
_INJECTION_ROLES: Final[frozenset[Role]] = frozenset({"user", "tool"})
_THREAD_AT: Final = 64 * 1024  # characters past which a scan runs in a worker thread


@frozen
class _Rule:
    category: str
    message: str
    pattern: re.Pattern[str]

    def find(self, text: str) -> Iterator[Violation]:
        for match in self.pattern.finditer(text):
            yield Violation(self.category, self.message, span=match.span())


def _blocklist_rule(blocklist: BlocklistSettings) -> _Rule:
    phrases = sorted({word.strip() for word in blocklist.words}, key=len, reverse=True)
    alternatives = "|".join(r"\s+".join(map(re.escape, p.split())) for p in phrases)
    pattern = re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)
    return _Rule(blocklist.category, "a blocked word or phrase", pattern)


def _pattern_rule(entry: PatternSettings) -> _Rule:
    flags = re.IGNORECASE if entry.ignore_case else 0
    return _Rule(
        entry.category, "text matching a blocked pattern", re.compile(entry.pattern, flags)
    )


def _deduplicated(ordered: Iterable[Violation]) -> tuple[Violation, ...]:
    """Drop a violation whose span lies inside an earlier one's of the same category
    (``ordered`` by position, see :func:`_position`)."""
    kept: list[Violation] = []
    reach: dict[str, int] = {}  # per category, the furthest end of a kept span
    for found in ordered:
        if found.span is None:
            kept.append(found)
        elif found.span[1] > reach.get(found.category, -1):
            kept.append(found)
            reach[found.category] = found.span[1]
    return tuple(kept)


def _position(violation: Violation) -> tuple[int, int]:
    """Earlier first; of two starting together, the longer first."""
    start, end = violation.span or (0, 0)
    return start, -end


class RulesShield:
    kind: ShieldKind = "rules"
    provider: str = "agentloom"
    model: str | None = None

    def __init__(self, settings: RulesShieldSettings) -> None:
        self.id = settings.id
        self._rules = [
            *(_blocklist_rule(b) for b in settings.blocklists),
            *(_pattern_rule(p) for p in settings.patterns),
        ]
        self._detectors = [PII_DETECTORS[n] for n in settings.detectors if n in PII_DETECTORS]
        self._injection = "prompt_injection" in settings.detectors
        self._threshold = settings.injection_threshold

    async def check(self, text: str, *, role: Role) -> Verdict:
        if len(text) >= _THREAD_AT:
            return await anyio.to_thread.run_sync(self.scan, text, role)
        return self.scan(text, role)

    def scan(self, text: str, role: Role) -> Verdict:
        """The check, synchronously."""
        found: list[Violation] = []
        for rule in self._rules:
            found.extend(rule.find(text))
        for detect in self._detectors:
            found.extend(detect(text))
        if self._injection and role in _INJECTION_ROLES:
            found.extend(prompt_injection(text, self._threshold))
        ordered = sorted(found, key=_position)
        return Verdict(self.id, _deduplicated(ordered))

    async def aclose(self) -> None:
        """Nothing to release."""
