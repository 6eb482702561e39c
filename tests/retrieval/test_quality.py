"""Hybrid search is at least as good as either side alone on the labelled corpus of
``bench/retrieval.py``, with the embedded all-MiniLM-L6-v2 (quality only, no timing)."""

from __future__ import annotations

import pytest
from bench.retrieval import Quality, evaluate

from agentloom.config import EmbeddingSettings
from agentloom.retrieval.embeddings import build_embedder


@pytest.fixture(scope="module")
def quality() -> dict[str, Quality]:
    return {q.label: q for q in evaluate(build_embedder(EmbeddingSettings()))}


def test_hybrid_is_at_least_as_good_as_each_side(quality: dict[str, Quality]) -> None:
    hybrid, vector, keyword = quality["hybrid"], quality["vector"], quality["keyword"]

    assert hybrid.recall >= max(vector.recall, keyword.recall)
    assert hybrid.mrr >= max(vector.mrr, keyword.mrr)


def test_each_side_wins_its_own_kind_of_question(quality: dict[str, Quality]) -> None:
    """The corpus tells the sides apart: keywords find identifiers, vectors paraphrases."""
    vector, keyword = quality["vector"], quality["keyword"]

    assert keyword.recall_by_kind["identifier"] > vector.recall_by_kind["identifier"]
    assert vector.recall_by_kind["paraphrase"] > keyword.recall_by_kind["paraphrase"]
