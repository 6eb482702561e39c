"""The scorers, table-driven: GAIA's normalised exact match by the kind of the expected answer,
``contains``, and the final answer read from a reply."""

from __future__ import annotations

import pytest

from agentloom.errors import InvalidRequestError
from agentloom.evals.scorers import (
    contains,
    exact_match,
    final_answer,
    normalise_text,
    parse_number,
    score,
)

EXACT = [
    # numbers: compared as numbers, currency / percent / thousands separators / units stripped
    ("391", "391", True),
    ("391.0", "391", True),
    ("391.", "391", True),
    ("390", "391", False),
    ("1250", "1,250", True),
    ("1,250", "1250", True),
    ("$1,024.50", "1024.5", True),
    ("80 km/h", "80", True),
    ("80", "80 km/h", True),
    ("15%", "15", True),
    ("-3", "-3", True),
    ("3", "-3", False),
    ("1e3", "1000", True),
    ("0.30000000000000004", "0.3", True),
    ("eighty", "80", False),
    ("80 or 81", "80", False),
    ("", "80", False),
    # lists: as many elements, each a number or a string
    ("11, 13, 17, 19", "11, 13, 17, 19", True),
    ("11,13,17,19", "11, 13, 17, 19", True),
    ("11; 13; 17; 19", "11, 13, 17, 19", True),
    ("11, 13, 17", "11, 13, 17, 19", False),
    ("13, 11, 17, 19", "11, 13, 17, 19", False),
    ("1,2", "1, 2", True),
    ("Apple, the Banana", "apple, banana", True),
    ("apple, cherry", "apple, banana", False),
    # strings: lower case, no punctuation, no articles, whitespace collapsed
    ("Canberra", "Canberra", True),
    ("canberra.", "Canberra", True),
    ("  The   Eiffel Tower! ", "eiffel tower", True),
    ("Sydney", "Canberra", False),
    ("Canberra, Australia", "Canberra", False),
    ("Theatre", "theatre", True),
    ("ÉCOLE", "école", True),
]


@pytest.mark.parametrize(("answer", "expected", "right"), EXACT)
def test_exact_match(answer: str, expected: str, right: bool) -> None:
    assert exact_match(answer, expected) is right


@pytest.mark.parametrize(
    ("answer", "expected", "right"),
    [
        ("It is Porto, from next week.", "Porto", True),
        ("Portofino", "Porto", False),
        ("The New York Times", "new york", True),
        ("York", "new york", False),
        ("anything", "!!!", False),  # nothing left to look for
    ],
)
def test_contains(answer: str, expected: str, right: bool) -> None:
    assert contains(answer, expected) is right


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("Let me think.\nFINAL ANSWER: 391", "391"),
        ("final answer: **Canberra**", "Canberra"),
        ("Draft FINAL ANSWER: 1\nChecked. Final Answer: 2", "2"),
        ("Final answer\uff1a Lysvik", "Lysvik"),
        ("  Just the answer  ", "Just the answer"),
    ],
)
def test_the_final_answer_of_a_reply(reply: str, answer: str) -> None:
    assert final_answer(reply) == answer


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("12", 12.0),
        ("€3.50", 3.5),
        ("1,234,567", 1234567.0),
        ("2 apples", 2.0),
        ("2023-01-01", None),
        ("Apollo 11", None),
        ("nan", None),
        ("1,2", None),
    ],
)
def test_parse_number(text: str, number: float | None) -> None:
    assert parse_number(text) == number


def test_normalise_text() -> None:
    assert normalise_text("The  Quick, brown fox — an ANIMAL.") == "quick brown fox animal"


@pytest.mark.parametrize(
    ("scorer", "reply", "accepted", "expected"),
    [
        ("exact", "FINAL ANSWER: 1,250", "1250", 1.0),
        ("exact", "FINAL ANSWER: NYC", ["New York City", "NYC"], 1.0),
        ("exact", "FINAL ANSWER: Boston", ["New York City", "NYC"], 0.0),
        ("contains", "I think it is Porto.", "porto", 1.0),
    ],
)
def test_score_takes_the_best_accepted_answer(
    scorer: str, reply: str, accepted: str | list[str], expected: float
) -> None:
    assert score(scorer, reply, accepted) == expected


def test_an_unknown_scorer_is_named() -> None:
    with pytest.raises(
        InvalidRequestError, match="unknown scorer 'fuzzy'; known scorers: exact, contains"
    ):
        score("fuzzy", "x", "x")
