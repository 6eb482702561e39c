"""``rewrite_query``: a natural-language question turned into the words worth searching for.

Deterministic (no model call): lower-case, punctuation dropped, question words and filler
words removed. A query made only of such words is kept (lower-cased) rather than emptied.
"""

from __future__ import annotations

import re

_EDGES = ".-'\u2019"
_WORD = re.compile(r"[^\W_]+(?:['\u2019.-][^\W_]+)*", re.UNICODE)

_FILLER_WORDS = """
    what whats what's which who whom whose when where why how
    is are was were be been being am do does did done can could would should will shall may
    might must i me my we our you your please kindly tell show find give explain describe
    about the a an of to for in on at by with from into any some there this that these those
    it its it's let's lets know want need like just really actually hey hi hello thanks
    thank search look up information info details regarding and
"""
FILLERS: frozenset[str] = frozenset(_FILLER_WORDS.split())


def rewrite_query(query: str) -> str:
    words = [w.strip(_EDGES) for w in _WORD.findall(query.lower())]
    kept = [w for w in words if w and w not in FILLERS]
    return " ".join(kept or [w for w in words if w]) or query.strip().lower()
