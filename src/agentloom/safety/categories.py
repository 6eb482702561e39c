"""Safety categories: the Llama Guard 3 hazard taxonomy, OpenAI's moderation keys, and the one
table mapping our shields' categories onto OpenAI's."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from agentloom.frozen import frozen

if TYPE_CHECKING:
    from agentloom.safety.base import Violation


@frozen
class Hazard:
    code: str  # "S1"
    name: str  # as the Llama Guard 3 prompt names it
    description: str


HAZARDS: Final[tuple[Hazard, ...]] = (
    Hazard("S1", "Violent Crimes", "enabling, encouraging or endorsing violent crimes"),
    Hazard("S2", "Non-Violent Crimes", "enabling fraud, theft, hacking, drug or weapons crimes"),
    Hazard("S3", "Sex Crimes", "enabling sex trafficking, sexual assault or harassment"),
    Hazard("S4", "Child Exploitation", "sexual content involving or abuse of minors"),
    Hazard("S5", "Defamation", "verifiably false statements injuring a living person"),
    Hazard("S6", "Specialized Advice", "unqualified financial, medical or legal advice"),
    Hazard("S7", "Privacy", "sensitive, nonpublic personal information"),
    Hazard("S8", "Intellectual Property", "violating someone's intellectual property rights"),
    Hazard("S9", "Indiscriminate Weapons", "chemical, biological, nuclear or explosive weapons"),
    Hazard("S10", "Hate", "demeaning people for their protected characteristics"),
    Hazard("S11", "Self-Harm", "enabling or encouraging suicide, self-injury or eating disorders"),
    Hazard("S12", "Sexual Content", "sexually explicit content"),
    Hazard("S13", "Elections", "factually wrong information about electoral processes"),
    Hazard("S14", "Code Interpreter Abuse", "abusing code interpreters: exploits, escapes, DoS"),
)
HAZARD_CODES: Final[frozenset[str]] = frozenset(h.code for h in HAZARDS)
HAZARDS_BY_CODE: Final[dict[str, Hazard]] = {h.code: h for h in HAZARDS}

# Every category key OpenAI's moderation results carry (all present, as booleans and floats).
OPENAI_CATEGORIES: Final[tuple[str, ...]] = (
    "harassment",
    "harassment/threatening",
    "hate",
    "hate/threatening",
    "illicit",
    "illicit/violent",
    "self-harm",
    "self-harm/instructions",
    "self-harm/intent",
    "sexual",
    "sexual/minors",
    "violence",
    "violence/graphic",
)

# Our categories (exact, or a prefix ending in ".") -> the moderation key reported for them.
# OpenAI's own keys map to themselves; a category not here is reported under its own name.
MODERATION_KEYS: Final[dict[str, str]] = {
    "S1": "violence",
    "S2": "illicit",
    "S3": "sexual",
    "S4": "sexual/minors",
    "S7": "pii",
    "S9": "illicit/violent",
    "S10": "hate",
    "S11": "self-harm",
    "S12": "sexual",
    "pii.": "pii",
    "secret.": "secrets",
}


def moderation_key(category: str) -> str:
    """The moderation key ``category`` is reported under."""
    if category in MODERATION_KEYS:
        return MODERATION_KEYS[category]
    prefix = category.split(".", 1)[0] + "."
    return MODERATION_KEYS.get(prefix, category)


def moderation_scores(violations: Iterable[Violation]) -> tuple[dict[str, float], set[str]]:
    """Scores for every OpenAI key and for each key violated (its moderation key and its own
    category), the highest score of a key winning; and the set of flagged keys."""
    scores = dict.fromkeys(OPENAI_CATEGORIES, 0.0)
    flagged: set[str] = set()
    for violation in violations:
        for key in (moderation_key(violation.category), violation.category):
            scores[key] = max(scores.get(key, 0.0), violation.score)
            flagged.add(key)
    return scores, flagged
