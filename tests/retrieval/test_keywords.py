"""Keyword terms: lower case, stop words out, light stemming, identifiers kept whole."""

from __future__ import annotations

import pytest

from agentloom.retrieval.keywords import normalise, stem, terms, words


def test_terms_are_lower_case_without_stop_words() -> None:
    assert terms("The Pump and THE valve of a Boiler") == ["pump", "valv", "boiler"]


@pytest.mark.parametrize(
    "group",
    [
        ["charge", "charges", "charged", "charging"],
        ["battery", "batteries"],
        ["box", "boxes"],
        ["class", "classes"],
        ["process", "processes"],
        ["run", "running", "runs"],
        ["stop", "stopped", "stopping", "stops"],
        ["fall", "falling", "falls"],
        ["need", "needs", "needed"],
        ["use", "used", "uses", "using"],
        ["match", "matches"],
    ],
)
def test_inflections_share_a_stem(group: list[str]) -> None:
    assert len({stem(word) for word in group}) == 1, [stem(word) for word in group]


@pytest.mark.parametrize(
    "word", ["status", "analysis", "bus", "glass", "red", "bed", "ring", "thing", "string"]
)
def test_words_that_only_look_inflected_keep_their_letters(word: str) -> None:
    assert stem(word) == word


def test_identifiers_are_kept_whole_and_in_parts() -> None:
    assert terms("Upgrade to v2.1 with GPT-4 and code XR-7734") == [
        *["upgrad", "v2.1", "v2", "1", "gpt-4", "gpt", "4"],
        *["cod", "xr-7734", "xr", "7734"],
    ]
    assert terms("snake_case_name") == ["snake_case_name", "snak", "cas", "nam"]


def test_numbers_and_other_scripts_are_kept_unstemmed() -> None:
    assert terms("In 2024 the Café in Zürich served 東京 ramen") == [
        *["2024", "café", "zürich", "serv", "東京", "ramen"],
    ]


def test_punctuation_and_apostrophes_split_words() -> None:
    assert terms("Don't stop: the pump's valves (all of them)!") == ["stop", "pump", "valv"]


def test_terms_are_normalise_applied_to_words() -> None:
    text = "Running the gpt-4 pumps, in 2024"

    assert words(text) == ["running", "the", "gpt-4", "pumps", "in", "2024"]
    assert terms(text) == [term for word in words(text) for term in normalise(word)]


def test_empty_and_stop_word_only_texts_have_no_terms() -> None:
    assert terms("") == []
    assert terms("  it is what it is, and that was that  ") == []
