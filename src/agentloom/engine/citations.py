"""Citations for an answer written from what tools found: ``file_citation`` annotations for
file_search passages, ``url_citation`` for web_search results.

The model is shown numbered passages and asked to cite them as ``[1]``. A citation marker the
answer contains (``[1]``, ``[1, 3]``, ``【2】``, ``【2†source】``) becomes a citation of that
passage's file at the marker. Small models often leave the markers out; for an answer without
any, each sentence is matched against the passages by shared keyword terms, and a sentence that
draws on a passage cites its file at the sentence's end. Each file is cited once per place.

A web result is cited by a ``url_citation`` spanning the cited text: from the start of the
sentence holding the marker to the marker's end (or the whole sentence, without markers).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from agentloom.api.content import Annotation, FileCitation, URLCitation
from agentloom.frozen import frozen
from agentloom.retrieval.keywords import terms
from agentloom.tools.base import Source

_MARKER = re.compile(r"\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]|【(\d{1,3})(?:[:†][^】]{0,40})?】")
_SENTENCE_END = re.compile(r"[.!?。](?=\s|$)|\n\s*\n|\n(?=\s*[-*\d])")
MIN_SHARED = 2  # terms a sentence must share with a passage to count as drawing on it
MIN_SUPPORT = 0.5  # and the share of the sentence's terms found in the passage


_Citation = FileCitation | URLCitation


@frozen
class _Sentence:
    start: int
    end: int  # where a citation of it goes: after its last character
    terms: frozenset[str]


class Citations:
    """The sources found during a response, and the annotations they give an answer."""

    def __init__(self) -> None:
        self.sources: list[Source] = []
        self._terms: dict[int, frozenset[str]] = {}

    @property
    def next_number(self) -> int:
        return len(self.sources) + 1

    def add(self, sources: Iterable[Source]) -> None:
        self.sources.extend(sources)

    def annotate(self, text: str) -> list[Annotation]:
        if not self.sources or not text.strip():
            return []
        marked = self._from_markers(text)
        return list(marked if marked else self._from_overlap(text))

    def _from_markers(self, text: str) -> list[_Citation]:
        by_number = {s.number: s for s in self.sources}
        found: list[_Citation] = []
        for match in _MARKER.finditer(text):
            numbers = (match.group(1) or match.group(2)).split(",")
            for number in numbers:
                source = by_number.get(int(number))
                if source is not None:
                    span = (_sentence_start(text, match.start()), match.end())
                    found.append(_citation(source, match.start(), span))
        return _unique(found)

    def _from_overlap(self, text: str) -> list[_Citation]:
        found: list[_Citation] = []
        for sentence in _sentences(text):
            source = self._best_source(sentence)
            if source is not None:
                span = (sentence.start, sentence.end)
                found.append(_citation(source, sentence.end, span))
        return _unique(found)

    def _best_source(self, sentence: _Sentence) -> Source | None:
        if len(sentence.terms) < MIN_SHARED:
            return None
        best, best_share = None, 0
        for source in self.sources:
            shared = len(sentence.terms & self._source_terms(source))
            if shared >= MIN_SHARED and shared > best_share:
                best, best_share = source, shared
        if best is None or best_share / len(sentence.terms) < MIN_SUPPORT:
            return None
        return best

    def _source_terms(self, source: Source) -> frozenset[str]:
        cached = self._terms.get(source.number)
        if cached is None:
            cached = self._terms[source.number] = frozenset(terms(source.text))
        return cached


def _sentences(text: str) -> list[_Sentence]:
    sentences: list[_Sentence] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end() if text[match.start()] in ".!?。" else match.start()
        _append(sentences, text, start, end)
        start = match.end()
    _append(sentences, text, start, len(text.rstrip()))
    return sentences


def _append(sentences: list[_Sentence], text: str, start: int, end: int) -> None:
    words = frozenset(terms(text[start:end]))
    if words:
        lead = len(text[start:end]) - len(text[start:end].lstrip())
        sentences.append(_Sentence(start=start + lead, end=end, terms=words))


def _sentence_start(text: str, index: int) -> int:
    """Where the sentence holding ``index`` starts (its first non-space character); a marker
    right after a sentence's end (``... years. [1]``) belongs to that sentence."""
    starts = [0] + [m.end() for m in _SENTENCE_END.finditer(text, 0, index)]
    for start in reversed(starts):
        if text[start:index].strip():
            return start + len(text[start:index]) - len(text[start:index].lstrip())
    return index


def _citation(source: Source, index: int, span: tuple[int, int]) -> _Citation:
    if source.url is not None:
        title = source.title or source.url
        return URLCitation(url=source.url, title=title, start_index=span[0], end_index=span[1])
    return FileCitation(file_id=source.file_id, filename=source.filename, index=index)


def _key(citation: _Citation) -> tuple[str, int]:
    if isinstance(citation, URLCitation):
        return citation.url, citation.start_index
    return citation.file_id, citation.index


def _place(citation: _Citation) -> int:
    return citation.start_index if isinstance(citation, URLCitation) else citation.index


def _unique(citations: Sequence[_Citation]) -> list[_Citation]:
    """One citation per file (or URL) and place, in text order."""
    seen: set[tuple[str, int]] = set()
    unique: list[_Citation] = []
    for citation in sorted(citations, key=_place):
        key = _key(citation)
        if key not in seen:
            seen.add(key)
            unique.append(citation)
    return unique
