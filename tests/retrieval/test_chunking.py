"""Static chunking: exact slices, token limits, overlap, preferred cut points, OpenAI's limits."""

from __future__ import annotations

import itertools
import random

import pytest

from agentloom.retrieval.chunking import (
    AUTO_MAX_TOKENS,
    AUTO_OVERLAP_TOKENS,
    Chunk,
    check_static,
    chunk_text,
    count_tokens,
)


def _sentence(rng: random.Random) -> str:
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"]
    return " ".join(rng.choice(words) for _ in range(rng.randint(4, 14))).capitalize() + "."


def _document(seed: int, paragraphs: int = 30) -> str:
    rng = random.Random(seed)
    return "\n\n".join(
        " ".join(_sentence(rng) for _ in range(rng.randint(1, 6))) for _ in range(paragraphs)
    )


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("hello world", 2),
        ("Hello, world!", 4),
        ("internationalization", 5),  # pieces of 4 until 7 or fewer letters are left
        ("retrieval", 2),
        ("1234567", 3),  # digits in groups of 3
        ("gpt-4o v2.1", 8),
        ("snake_case", 3),
        ("東京都", 3),
        ("   \n\t ", 0),
        ("", 0),
    ],
)
def test_token_counts(text: str, tokens: int) -> None:
    assert count_tokens(text) == tokens


@pytest.mark.parametrize("text", ["", " ", "\n\n\t  \r\n"])
def test_whitespace_only_text_has_no_chunks(text: str) -> None:
    assert chunk_text(text, max_tokens=100, overlap=10) == []


def test_short_text_is_one_chunk_without_its_surrounding_whitespace() -> None:
    text = "\n  A short note about pumps.  \n"

    assert chunk_text(text, max_tokens=100, overlap=50) == [
        Chunk("A short note about pumps.", 3, 28, 6)
    ]


@pytest.mark.parametrize(("max_tokens", "overlap"), [(100, 0), (100, 50), (150, 30), (37, 5)])
def test_chunks_are_exact_slices_within_the_limit_and_cover_the_text(
    max_tokens: int, overlap: int
) -> None:
    text = _document(seed=max_tokens)
    chunks = chunk_text(text, max_tokens=max_tokens, overlap=overlap)

    assert len(chunks) > 5
    for chunk in chunks:
        assert chunk.text == text[chunk.start : chunk.end]
        assert chunk.text
        assert chunk.text == chunk.text.strip()
        assert chunk.tokens == count_tokens(chunk.text) <= max_tokens
    assert chunks[0].start == 0
    assert chunks[-1].end == len(text)
    for before, after in itertools.pairwise(chunks):
        assert before.start < after.start
        assert not text[before.end : after.start].strip()  # nothing but whitespace left out


def _label(i: int) -> str:
    """A distinct word of letters only (one token) for each ``i``."""
    return "w" + "".join(chr(ord("a") + int(d)) for d in str(i))


def test_neighbours_overlap_by_the_requested_tokens() -> None:
    text = " ".join(_label(i) for i in range(1000))  # one token per word, no sentence ends

    chunks = chunk_text(text, max_tokens=100, overlap=30)

    assert [c.tokens for c in chunks[:-1]] == [100] * (len(chunks) - 1)
    for before, after in itertools.pairwise(chunks):
        assert count_tokens(text[after.start : before.end]) == 30
    assert chunks[1].text.startswith(f"{_label(70)} ")


def test_the_cut_prefers_a_paragraph_then_a_sentence_end() -> None:
    first = "One two three four five six seven eight nine ten. " * 7  # 77 tokens
    text = first.strip() + "\n\n" + "Eleven twelve thirteen. " * 20
    chunks = chunk_text(text, max_tokens=100, overlap=0)

    assert chunks[0].text == first.strip()  # paragraph break at 77 tokens, within the last quarter

    sentences = "Alpha beta gamma delta epsilon zeta eta theta. " * 30  # 9 tokens a sentence
    chunks = chunk_text(sentences, max_tokens=100, overlap=0)

    assert all(c.text.endswith("theta.") for c in chunks)
    assert chunks[0].tokens == 99


def test_a_break_too_early_in_the_window_is_not_taken() -> None:
    text = "Short paragraph.\n\n" + " ".join(_label(i) for i in range(300))

    chunks = chunk_text(text, max_tokens=100, overlap=0)

    assert chunks[0].tokens == 100  # the paragraph break after 3 tokens would waste the window


def test_a_long_word_is_cut_at_the_limit() -> None:
    text = "x" * 2000  # pieces of 4 letters: no space to cut at

    chunks = chunk_text(text, max_tokens=100, overlap=10)

    assert (chunks[0].start, chunks[0].end, chunks[0].tokens) == (0, 400, 100)
    assert (chunks[1].start, chunks[1].end) == (360, 760)
    assert chunks[-1].end == len(text)


def test_the_auto_strategy_chunks_a_long_document() -> None:
    text = _document(seed=7, paragraphs=400)

    chunks = chunk_text(text, max_tokens=AUTO_MAX_TOKENS, overlap=AUTO_OVERLAP_TOKENS)

    assert (AUTO_MAX_TOKENS, AUTO_OVERLAP_TOKENS) == (800, 400)
    assert all(600 <= c.tokens <= 800 for c in chunks[:-1])
    assert chunks[-1].end == len(text)


@pytest.mark.parametrize(("max_tokens", "overlap"), [(0, 0), (10, 10), (10, -1), (10, 11)])
def test_impossible_parameters_are_refused(max_tokens: int, overlap: int) -> None:
    with pytest.raises(ValueError, match="cannot chunk"):
        chunk_text("some text", max_tokens=max_tokens, overlap=overlap)


@pytest.mark.parametrize(("max_tokens", "overlap"), [(100, 0), (100, 50), (4096, 2048), (800, 400)])
def test_static_limits_accept(max_tokens: int, overlap: int) -> None:
    check_static(max_tokens, overlap)


@pytest.mark.parametrize(
    ("max_tokens", "overlap", "message"),
    [
        (99, 0, "max_chunk_size_tokens must be between 100 and 4096, got 99"),
        (4097, 0, "max_chunk_size_tokens must be between 100 and 4096, got 4097"),
        (100, 51, r"chunk_overlap_tokens must not exceed half of max_chunk_size_tokens \(50\)"),
        (100, -1, "chunk_overlap_tokens must not be negative"),
    ],
)
def test_static_limits_refuse(max_tokens: int, overlap: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_static(max_tokens, overlap)
