"""Keyword terms for the BM25 side of the index.

``terms`` lower-cases the text, splits it into Unicode words, drops English stop words and strips
a few English suffixes (plural -s/-es/-ies, -ing, -ed but not -eed, a final -e) so that
"charging", "charged" and "charges" meet "charge". Words joined by ``.``, ``-``, ``_`` or ``/``
("v2.1", "gpt-4", "xr-7734", "snake_case") are kept whole and unstemmed, followed by their parts,
so both the exact identifier and its pieces can match. Numbers are kept as they are.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["STOP_WORDS", "normalise", "stem", "terms", "words"]

_WORD = re.compile(r"[^\W_]+(?:[._/-][^\W_]+)*")
_PART = re.compile(r"[^\W_]+")

_STOP_WORDS = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves s t d ll m re ve don
    doesn didn isn aren wasn weren won wouldn shouldn couldn hasn haven hadn
"""
STOP_WORDS = frozenset(_STOP_WORDS.split())

_NO_UNDOUBLE = frozenset("lsz")


def terms(text: str) -> list[str]:
    """The normalised keyword terms of ``text``, in order, repeats kept."""
    return [term for word in words(text) for term in normalise(word)]


def words(text: str) -> list[str]:
    """The lower-cased words of ``text``, before stop words and stemming: ``terms`` is
    ``normalise`` applied to each (callers that see the same words often cache that)."""
    return _WORD.findall(text.lower())


@lru_cache(maxsize=1 << 16)
def normalise(word: str) -> tuple[str, ...]:
    """The terms of one word from ``words``: none for a stop word, the stem of a plain word,
    the whole of a joined word and then its parts'."""
    parts = _PART.findall(word)
    kept = tuple(stem(p) for p in parts if p not in STOP_WORDS)
    if len(parts) == 1:
        return kept
    return (word, *kept)


def stem(word: str) -> str:
    """A light, predictable English suffix stripper; other words are returned unchanged."""
    if len(word) <= 2 or not (word.isascii() and word.isalpha()):
        return word
    word = _plural(word)
    if word.endswith("ing") and _has_vowel(word[:-3]):
        word = _undouble(word[:-3])
    elif word.endswith("ed") and not word.endswith("eed") and _has_vowel(word[:-2]):
        word = _undouble(word[:-2])
    if word.endswith("e") and len(word) > 2:
        word = word[:-1]
    return word


def _plural(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _has_vowel(stem: str) -> bool:
    """Whether ``stem`` can stand alone: two letters or more, one of them a vowel."""
    return len(stem) >= 2 and any(c in "aeiouy" for c in stem)


def _undouble(stem: str) -> str:
    if len(stem) >= 3 and stem[-1] == stem[-2] and stem[-1] not in _NO_UNDOUBLE:
        return stem[:-1]
    return stem
