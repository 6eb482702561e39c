"""Static chunking: text cut into overlapping slices of at most ``max_tokens`` tokens.

Tokens are counted with a regex approximation of a BPE tokenizer (the real one needs a
vocabulary file we cannot download at run time): a word of up to 7 letters is one token, a longer
one costs one token per 4 letters more, digits go in groups of 3, every punctuation mark and every
CJK character is a token of its own. On English prose that lands within ~10-15% of cl100k.

A chunk is an exact slice ``text[start:end]`` (no leading or trailing whitespace). When a window
is full the cut goes after the last paragraph break, sentence end, line break or space in the
window's last quarter, in that order of preference, else straight at the limit. The next chunk
starts ``overlap`` tokens before the cut.
"""

from __future__ import annotations

import math
import re

import numpy as np
from numpy.typing import NDArray

from agentloom.frozen import frozen

__all__ = [
    "AUTO_MAX_TOKENS",
    "AUTO_OVERLAP_TOKENS",
    "MAX_CHUNK_TOKENS",
    "MIN_CHUNK_TOKENS",
    "Chunk",
    "Span",
    "check_static",
    "chunk_spans",
    "chunk_text",
    "count_tokens",
]

MIN_CHUNK_TOKENS = 100
MAX_CHUNK_TOKENS = 4096
AUTO_MAX_TOKENS = 800  # OpenAI's documented "auto" strategy
AUTO_OVERLAP_TOKENS = 400

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
# One alternative per token kind, each followed by the whitespace after it, so that the matches
# tile the text (after its leading whitespace) and their lengths give every token's offset.
_TOKEN = re.compile(
    rf"(?:[{_CJK}]|[^\W\d_]{{1,7}}(?![^\W\d_])|[^\W\d_]{{1,4}}|\d{{1,3}}|_|[^\w\s])\s*"
)
_PARAGRAPH = re.compile(r"\n[^\S\n]*\n")
_SENTENCE = re.compile(r"[.!?\u2026][\"'\u201d\u2019)\]]*(?=\s)|[\u3002\uff01\uff1f]")
_LINE = re.compile(r"\n")


@frozen
class Chunk:
    text: str
    start: int
    end: int
    tokens: int


@frozen
class Span:
    """Where a chunk is in the text: ``text[start:end]``."""

    start: int
    end: int
    tokens: int


def check_static(max_tokens: int, overlap: int) -> None:
    """OpenAI's limits on a static chunking strategy; ``ValueError`` says which one is broken."""
    if not MIN_CHUNK_TOKENS <= max_tokens <= MAX_CHUNK_TOKENS:
        raise ValueError(
            f"max_chunk_size_tokens must be between {MIN_CHUNK_TOKENS} and {MAX_CHUNK_TOKENS},"
            f" got {max_tokens}"
        )
    if overlap < 0:
        raise ValueError(f"chunk_overlap_tokens must not be negative, got {overlap}")
    if overlap > max_tokens // 2:
        raise ValueError(
            "chunk_overlap_tokens must not exceed half of max_chunk_size_tokens"
            f" ({max_tokens // 2}), got {overlap}"
        )


def count_tokens(text: str) -> int:
    """The approximate token count of ``text``."""
    return len(_TOKEN.findall(text))


def chunk_text(text: str, *, max_tokens: int, overlap: int) -> list[Chunk]:
    """Cut ``text`` into chunks of at most ``max_tokens`` tokens that overlap by ``overlap``."""
    spans = chunk_spans(text, max_tokens=max_tokens, overlap=overlap)
    return [Chunk(text[s.start : s.end], s.start, s.end, s.tokens) for s in spans]


def chunk_spans(text: str, *, max_tokens: int, overlap: int) -> list[Span]:
    """Where :func:`chunk_text`'s chunks are, without copying their text (a large file's
    chunks hold about 1.3x its text)."""
    if max_tokens < 1 or not 0 <= overlap < max_tokens:
        raise ValueError(f"cannot chunk with max_tokens={max_tokens} and overlap={overlap}")
    starts = _token_starts(text)
    if not len(starts):
        return []
    return _Cutter(text, starts, max_tokens, overlap).spans()


def _token_starts(text: str) -> NDArray[np.int64]:
    """Every token's offset (the matches tile the text after its leading whitespace). Read
    from the matches one at a time: a list of the tokens' strings would take ~50 bytes each,
    ~20x the text."""
    return np.fromiter((m.start() for m in _TOKEN.finditer(text)), dtype=np.int64)


def _boundaries(pattern: re.Pattern[str], text: str, starts: NDArray[np.int64]) -> NDArray[np.intp]:
    """Indices of the tokens after which ``pattern`` marks a boundary (sorted, unique)."""
    positions = np.fromiter((m.end() - 1 for m in pattern.finditer(text)), dtype=np.int64)
    return np.unique(np.searchsorted(starts, positions, side="right") - 1)


class _Cutter:
    def __init__(self, text: str, starts: NDArray[np.int64], max_tokens: int, overlap: int) -> None:
        self.text = text
        self.starts = starts
        self.max_tokens = max_tokens
        self.overlap = overlap
        self.min_cut = max(math.ceil(max_tokens * 3 / 4), overlap + 1)
        self.tiers = [_boundaries(p, text, starts) for p in (_PARAGRAPH, _SENTENCE, _LINE)]

    def spans(self) -> list[Span]:
        out: list[Span] = []
        first, count = 0, len(self.starts)
        while True:
            if count - first <= self.max_tokens:
                out.append(self._span(first, count - 1))
                return out
            last = self._cut(first)
            out.append(self._span(first, last))
            first = last + 1 - self.overlap

    def _cut(self, first: int) -> int:
        """The last token of the chunk starting at token ``first``."""
        lo, hi = first + self.min_cut - 1, first + self.max_tokens - 1
        for tier in self.tiers:
            at = int(np.searchsorted(tier, hi, side="right")) - 1
            if at >= 0 and tier[at] >= lo:
                return int(tier[at])
        for last in range(hi, lo - 1, -1):
            if self.text[self.starts[last + 1] - 1].isspace():
                return last
        return hi

    def _span(self, first: int, last: int) -> Span:
        start = int(self.starts[first])
        stop = int(self.starts[last + 1]) if last + 1 < len(self.starts) else len(self.text)
        end = int(self.starts[last]) + len(self.text[self.starts[last] : stop].rstrip())
        return Span(start, end, last - first + 1)
