"""``rewrite_query``: deterministic, keeps the words worth searching for."""

from __future__ import annotations

import pytest

from agentloom.services.vector_stores.query_rewrite import rewrite_query


@pytest.mark.parametrize(
    ("query", "rewritten"),
    [
        ("What is the return policy?", "return policy"),
        ("How do I reset my password, please?", "reset password"),
        ("Tell me about the Zephyr X2 kettle's warranty!", "zephyr x2 kettle's warranty"),
        ("Where is it?", "where is it"),  # nothing but fillers: kept, lower-cased
        ("ISO-8601 dates in 2024", "iso-8601 dates 2024"),
        ("¿Dónde está la estación?", "dónde está la estación"),
        ("   ", ""),
    ],
)
def test_rewrite_query(query: str, rewritten: str) -> None:
    assert rewrite_query(query) == rewritten
