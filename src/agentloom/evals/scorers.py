"""Scorers: an agent's answer against the accepted answers, 1.0 right and 0.0 wrong.

The answer scored is what follows the last ``FINAL ANSWER:`` of the agent's reply (the whole
reply when it has none); the default instructions of a run ask for that line, as GAIA does.

``exact`` is GAIA's normalised exact match, by the kind of the expected answer:

- a number (``391``, ``1,024``, ``$12.50``, ``80 km/h``, ``15%``): the answer must be a number
  equal to it, once currency signs, percent signs, thousands separators and a trailing unit are
  stripped from both (``80`` matches ``80.0 km/h``);
- a list (commas or semicolons): as many elements, each compared as a number or a string;
- a string: equal once both are lower-cased, punctuation and the articles a / an / the removed
  and whitespace collapsed (``The Eiffel Tower.`` matches ``eiffel tower``).

``contains``: the expected answer, normalised as a string, appears as whole words in the
normalised reply (for free-text answers). A list of accepted answers scores the best of them.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import TypeAlias

from agentloom.errors import InvalidRequestError

__all__ = [
    "SCORERS",
    "Scorer",
    "contains",
    "exact_match",
    "final_answer",
    "normalise_text",
    "parse_number",
    "score",
]

Scorer: TypeAlias = Callable[[str, str], bool]  # (answer, expected) -> right?

_FINAL = re.compile(r"final\s+answer\s*[:\uff1a]", re.IGNORECASE)
_CURRENCY = re.compile(r"[$€£¥₹]")
_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_NUMBER = re.compile(
    r"^(?P<number>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*(?P<unit>[^\W\d][^\d,;]{0,19})?$"
)
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_SEPARATORS = re.compile(r"[,;]")


def final_answer(reply: str) -> str:
    """What follows the reply's last ``FINAL ANSWER:`` (the whole reply without one)."""
    marks = list(_FINAL.finditer(reply))
    answer = reply[marks[-1].end() :] if marks else reply
    return answer.strip().strip("*_`").strip()


def parse_number(text: str) -> float | None:
    """``text`` as a number once currency, percent, thousands separators and a trailing unit
    are stripped; ``None`` when it is not one number."""
    core = _CURRENCY.sub("", text).replace("%", " ").strip().rstrip(".").strip()
    grouped = _THOUSANDS.match(core)
    if grouped:
        core = grouped.group(0).replace(",", "") + core[grouped.end() :]
    found = _NUMBER.match(core)
    if found is None:
        return None
    value = float(found.group("number"))
    return value if math.isfinite(value) else None


def normalise_text(text: str) -> str:
    """Lower case, no punctuation, no articles, single spaces."""
    lowered = unicodedata.normalize("NFKC", text).lower()
    bare = "".join(" " if unicodedata.category(c).startswith("P") else c for c in lowered)
    return " ".join(_ARTICLES.sub(" ", bare).split())


def _same_number(answer: str, expected: float) -> bool:
    given = parse_number(answer)
    return given is not None and math.isclose(given, expected, rel_tol=1e-9, abs_tol=1e-9)


def _same_element(answer: str, expected: str) -> bool:
    number = parse_number(expected)
    if number is not None:
        return _same_number(answer, number)
    return normalise_text(answer) == normalise_text(expected)


def exact_match(answer: str, expected: str) -> bool:
    """GAIA's normalised exact match (see the module's docstring)."""
    number = parse_number(expected)
    if number is not None:
        return _same_number(answer, number)
    if _SEPARATORS.search(expected):
        given, wanted = _SEPARATORS.split(answer), _SEPARATORS.split(expected)
        return len(given) == len(wanted) and all(map(_same_element, given, wanted))
    return normalise_text(answer) == normalise_text(expected)


def contains(answer: str, expected: str) -> bool:
    """The expected answer appears, as whole words, in the normalised answer."""
    wanted = normalise_text(expected)
    return bool(wanted) and f" {wanted} " in f" {normalise_text(answer)} "


SCORERS: dict[str, Scorer] = {"exact": exact_match, "contains": contains}


def score(scorer: str, reply: str, accepted: str | Sequence[str]) -> float:
    """1.0 when the reply's final answer matches one of the accepted answers, else 0.0."""
    check = SCORERS.get(scorer)
    if check is None:
        known = ", ".join(SCORERS)
        raise InvalidRequestError(f"unknown scorer {scorer!r}; known scorers: {known}")
    answer = final_answer(reply)
    options = [accepted] if isinstance(accepted, str) else list(accepted)
    return 1.0 if any(check(answer, option) for option in options) else 0.0
