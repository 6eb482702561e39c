"""Citations of file_search passages: from the answer's markers, or from what it draws on."""

from __future__ import annotations

from agentloom.api.content import FileCitation
from agentloom.engine.citations import Citations
from agentloom.tools.base import Source

KETTLE = Source(1, "file-a", "kettle.md", "The kettle boils a litre of water in ninety seconds.")
CAKE = Source(2, "file-b", "cake.md", "Lemon cake needs four eggs and bakes for forty minutes.")
KETTLE_AGAIN = Source(3, "file-a", "kettle.md", "Its warranty lasts five years.")


def _citations(*sources: Source) -> Citations:
    citations = Citations()
    citations.add(sources)
    return citations


def _cited(annotations: list[object]) -> list[tuple[str, int]]:
    return [(a.file_id, a.index) for a in annotations if isinstance(a, FileCitation)]


def test_markers_cite_their_passages_at_the_marker() -> None:
    text = "It boils fast [1]. The cake takes forty minutes [2], under warranty 【3†source】."
    annotations = _citations(KETTLE, CAKE, KETTLE_AGAIN).annotate(text)

    assert _cited(annotations) == [
        ("file-a", text.index("[1]")),
        ("file-b", text.index("[2]")),
        ("file-a", text.index("【3")),
    ]
    assert all(isinstance(a, FileCitation) and a.filename for a in annotations)


def test_a_marker_listing_several_numbers_cites_each() -> None:
    text = "Both facts hold [1, 2]."
    annotations = _citations(KETTLE, CAKE).annotate(text)

    at = text.index("[1, 2]")
    assert _cited(annotations) == [("file-a", at), ("file-b", at)]


def test_markers_of_unknown_numbers_are_ignored() -> None:
    assert _citations(KETTLE).annotate("See [7] and the year [2024].") == []


def test_without_markers_a_sentence_cites_the_passage_it_draws_on() -> None:
    text = "The kettle boils water in ninety seconds. A lemon cake needs four eggs! Enjoy."
    annotations = _citations(KETTLE, CAKE).annotate(text)

    assert _cited(annotations) == [
        ("file-a", text.index("seconds.") + len("seconds.")),
        ("file-b", text.index("eggs!") + len("eggs!")),
    ]


def test_a_sentence_sharing_too_little_is_not_cited() -> None:
    text = "Water is wet. The weather in Paris was lovely and the museums were open late."
    assert _citations(KETTLE, CAKE).annotate(text) == []


def test_no_sources_no_citations() -> None:
    assert Citations().annotate("The kettle boils water in ninety seconds [1].") == []


def test_list_items_are_sentences_of_their_own() -> None:
    text = "Facts:\n- kettle boils a litre in ninety seconds\n- cake bakes forty minutes"
    annotations = _citations(KETTLE, CAKE).annotate(text)

    assert [file_id for file_id, _ in _cited(annotations)] == ["file-a", "file-b"]
    assert _cited(annotations)[1][1] == len(text)


def test_numbering_continues_across_searches() -> None:
    citations = _citations(KETTLE, CAKE)
    assert citations.next_number == 3
