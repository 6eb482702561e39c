"""``ChunkIndex``: BM25 by hand, vector top-k, file restriction, segments, fusion, scores."""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence

import numpy as np
import pytest
from numpy.typing import NDArray

from agentloom.retrieval.index import ChunkIndex, Hit, IndexedChunk, SearchMode, Weights
from agentloom.retrieval.segment import MAX_SEGMENTS

MODES: list[SearchMode] = ["vector", "keyword", "hybrid"]


def unit(*values: float) -> NDArray[np.float32]:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def ids(hits: Sequence[Hit]) -> list[int]:
    return [h.chunk_id for h in hits]


# --- keyword side ----------------------------------------------------------------------------

TINY = ["pump pump valve", "pump boiler", "valve boiler boiler chimney"]  # lengths 3, 2, 4


def tiny_index() -> ChunkIndex:
    index = ChunkIndex(2)
    index.add([IndexedChunk(i, "file-a", text, unit(1, i)) for i, text in enumerate(TINY)])
    return index


def test_bm25_of_a_single_term_by_hand() -> None:
    # N = 3, avgdl = 3, df(pump) = 2: idf cancels out in bm25 / ceiling = tf part / (k1 + 1)
    hits = tiny_index().search(None, "pumps", limit=5, mode="keyword")

    assert ids(hits) == [0, 1]
    assert hits[0].score == pytest.approx(2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 3 / 3)) / 2.2)
    assert hits[0].score == pytest.approx(0.625)
    assert hits[1].score == pytest.approx(1 / (1 + 1.2 * (0.25 + 0.75 * 2 / 3)))


def test_bm25_of_two_terms_by_hand() -> None:
    idf_boiler = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    idf_chimney = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    ceiling = 2.2 * (idf_boiler + idf_chimney)
    doc2 = idf_boiler * 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 4 / 3)) + idf_chimney * 2.2 / (
        1 + 1.2 * (0.25 + 0.75 * 4 / 3)
    )
    doc1 = idf_boiler * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 2 / 3))

    hits = tiny_index().search(None, "the boiler chimney, boiler", limit=5, mode="keyword")

    assert ids(hits) == [2, 1]
    assert [h.score for h in hits] == pytest.approx([doc2 / ceiling, doc1 / ceiling])


def test_a_query_term_no_chunk_holds_lowers_the_score_but_matches_nothing() -> None:
    index = tiny_index()
    plain = index.search(None, "chimney", limit=5, mode="keyword")
    padded = index.search(None, "chimney zeppelin", limit=5, mode="keyword")

    assert ids(plain) == ids(padded) == [2]
    assert padded[0].score < plain[0].score
    assert index.search(None, "zeppelin", limit=5, mode="keyword") == []
    assert index.search(None, "the of and", limit=5, mode="keyword") == []


# --- vector side -----------------------------------------------------------------------------


def random_chunks(
    count: int, dimensions: int = 16, seed: int = 0, files: int = 7
) -> list[IndexedChunk]:
    rng = np.random.default_rng(seed)
    vocabulary = [f"term{chr(97 + i % 26)}{chr(97 + i // 26)}" for i in range(200)]
    return [
        IndexedChunk(
            chunk_id=1000 + i,
            file_id=f"file-{i % files}",
            text=" ".join(rng.choice(vocabulary, size=int(rng.integers(3, 30)))),
            vector=rng.standard_normal(dimensions).astype(np.float32),
        )
        for i in range(count)
    ]


def brute_force(chunks: Sequence[IndexedChunk], query: NDArray[np.float32], k: int) -> list[int]:
    matrix = np.array([c.vector / np.linalg.norm(c.vector) for c in chunks])
    cosines = matrix @ (query / np.linalg.norm(query))
    return [chunks[i].chunk_id for i in np.argsort(-cosines)[:k]]


def test_vector_top_k_is_the_exact_nearest_by_cosine() -> None:
    chunks = random_chunks(500)
    index = ChunkIndex(16)
    index.add(chunks)
    rng = np.random.default_rng(1)
    for _ in range(20):
        query = rng.standard_normal(16).astype(np.float32)
        hits = index.search(query, "", limit=10, mode="vector")
        assert ids(hits) == brute_force(chunks, query, 10)


def test_vector_scores_are_cosines_clipped_at_zero() -> None:
    index = ChunkIndex(2)
    index.add(
        [
            IndexedChunk(1, "f", "a", unit(1, 0)),
            IndexedChunk(2, "f", "b", np.array([3, 3], dtype=np.float32)),  # not normalised
            IndexedChunk(3, "f", "c", unit(-1, 0)),
        ]
    )

    hits = index.search(np.array([2, 0], dtype=np.float32), "", limit=3, mode="vector")

    assert ids(hits) == [1, 2, 3]
    assert [h.score for h in hits] == pytest.approx([1.0, math.sqrt(0.5), 0.0])


# --- restriction to files --------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_search_can_be_restricted_to_some_files(mode: SearchMode) -> None:
    chunks = random_chunks(300)
    index = ChunkIndex(16)
    index.add(chunks)
    query, text = chunks[0].vector, chunks[0].text

    hits = index.search(query, text, limit=20, mode=mode, files={"file-2", "file-5", "nope"})

    assert len(hits) == 20
    assert {h.file_id for h in hits} <= {"file-2", "file-5"}
    everything = index.search(query, text, limit=1000, mode=mode)
    expected = [h.chunk_id for h in everything if h.file_id in {"file-2", "file-5"}]
    if mode != "hybrid":  # fusion depth depends on the limit; the ranking of each side does not
        assert ids(hits) == expected[:20]
    assert index.search(query, text, limit=5, mode=mode, files=["nope"]) == []
    assert index.search(query, text, limit=5, mode=mode, files=[]) == []


# --- segments --------------------------------------------------------------------------------


def test_many_small_additions_search_like_one_big_one() -> None:
    chunks = random_chunks(700, seed=3)
    whole = ChunkIndex(16)
    whole.add(chunks)
    pieces = ChunkIndex(16)
    at, size = 0, 1
    while at < len(chunks):
        pieces.add(chunks[at : at + size])
        at, size = at + size, size % 13 + 1
        assert len(pieces.segment_sizes) <= MAX_SEGMENTS
    assert len(pieces) == len(whole) == 700
    assert whole.segment_sizes == (700,)
    assert len(pieces.segment_sizes) > 1

    rng = np.random.default_rng(4)
    for mode in MODES:
        for i in range(10):
            query, text = rng.standard_normal(16).astype(np.float32), chunks[i * 50].text
            a = whole.search(query, text, limit=15, mode=mode, files=["file-1", "file-3"])
            b = pieces.search(query, text, limit=15, mode=mode, files=["file-1", "file-3"])
            assert ids(a) == ids(b)
            assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-6)


def test_removing_files_searches_like_never_adding_them() -> None:
    chunks = random_chunks(400, seed=5)
    index = ChunkIndex(16)
    for at in range(0, 400, 37):
        index.add(chunks[at : at + 37])
    kept = [c for c in chunks if c.file_id not in {"file-0", "file-4"}]
    fresh = ChunkIndex(16)
    fresh.add(kept)

    assert index.remove_files(["file-0", "file-4", "nope"]) == 400 - len(kept)
    assert index.remove_files(["file-0"]) == 0
    assert len(index) == len(kept)

    for mode in MODES:
        query, text = chunks[7].vector, chunks[7].text + " " + chunks[9].text
        a = index.search(query, text, limit=20, mode=mode)
        b = fresh.search(query, text, limit=20, mode=mode)
        assert ids(a) == ids(b)
        assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-6)


# --- hybrid ----------------------------------------------------------------------------------


def test_hybrid_finds_what_both_sides_half_agree_on() -> None:
    """Per query, a decoy tops each side; the answer is second on both, so only fusion puts
    it first."""
    index = ChunkIndex(2)
    index.add(
        [
            IndexedChunk(
                1, "f", "zebra zebra zebra zebra migration", unit(-0.2, 1)
            ),  # keyword decoy
            IndexedChunk(2, "f", "notes on travel", unit(1, 0)),  # the vector side's decoy
            IndexedChunk(3, "f", "the zebra migration season", unit(1, 0.1)),  # the answer
            IndexedChunk(4, "f", "unrelated words", unit(0, 1)),
        ]
    )
    query, text = unit(1, 0), "zebra"

    assert ids(index.search(query, text, limit=1, mode="keyword")) == [1]
    assert ids(index.search(query, text, limit=1, mode="vector")) == [2]
    hybrid = index.search(query, text, limit=4, mode="hybrid")
    assert ids(hybrid)[0] == 3
    assert hybrid[0].score == pytest.approx((1 / 62 + 1 / 62) / (2 / 61))


def test_hybrid_scores_one_for_a_chunk_first_on_both_sides() -> None:
    index = tiny_index()

    hits = index.search(unit(1, 0), "pump", limit=3, mode="hybrid")

    assert hits[0].chunk_id == 0
    assert hits[0].score == pytest.approx(1.0)
    assert all(0 <= h.score <= 1 for h in hits)


def test_weights_shift_hybrid_towards_one_side() -> None:
    chunks = random_chunks(200, seed=6)
    index = ChunkIndex(16)
    index.add(chunks)
    query, text = chunks[3].vector * -1, chunks[3].text

    vector_only = index.search(query, text, limit=10, mode="hybrid", weights=Weights(1, 0))
    text_only = index.search(query, text, limit=10, mode="hybrid", weights=Weights(0, 1))

    assert ids(vector_only) == ids(index.search(query, text, limit=10, mode="vector"))
    assert ids(text_only) == ids(index.search(query, text, limit=10, mode="keyword"))


def test_hybrid_returns_the_limit_whatever_the_fusion_window() -> None:
    chunks = random_chunks(300, seed=10)
    index = ChunkIndex(16)
    index.add(chunks)
    query, text = chunks[0].vector, chunks[0].text

    default = index.search(query, text, limit=40, mode="hybrid")
    narrow = index.search(query, text, limit=40, mode="hybrid", candidates=5)
    wide = index.search(query, text, limit=40, mode="hybrid", candidates=300)

    assert len(default) == len(narrow) == len(wide) == 40
    assert ids(narrow) == ids(default)  # the window is never narrower than the limit
    assert ids(wide) != ids(default)


@pytest.mark.parametrize("mode", MODES)
def test_scores_are_between_zero_and_one_best_first(mode: SearchMode) -> None:
    chunks = random_chunks(300, seed=8)
    index = ChunkIndex(16)
    index.add(chunks)
    for chunk in chunks[:20]:
        hits = index.search(chunk.vector, chunk.text, limit=10, mode=mode)
        scores = [h.score for h in hits]
        assert len(hits) == 10
        assert all(0 <= s <= 1 for s in scores)
        assert scores == sorted(scores, reverse=True)
        assert hits[0].chunk_id == chunk.chunk_id  # the chunk itself matches its own text best


# --- edges -----------------------------------------------------------------------------------


def test_an_empty_index_finds_nothing() -> None:
    index = ChunkIndex(4)
    index.add([])

    assert len(index) == 0
    for mode in MODES:
        assert index.search(unit(1, 0, 0, 0), "anything", limit=5, mode=mode) == []


def test_bad_arguments_are_refused() -> None:
    index = tiny_index()

    with pytest.raises(ValueError, match="2 dimensions, got 3"):
        index.search(unit(1, 1, 1), "pump", limit=3)
    with pytest.raises(ValueError, match="needs a query vector"):
        index.search(None, "pump", limit=3, mode="vector")
    with pytest.raises(ValueError, match="must have 2 dimensions"):
        index.add([IndexedChunk(9, "f", "x", unit(1, 2, 3))])
    with pytest.raises(ValueError, match="not both 0"):
        Weights(0, 0)
    with pytest.raises(ValueError, match=">= 0"):
        Weights(-1, 2)
    with pytest.raises(ValueError, match="positive"):
        ChunkIndex(0)
    assert index.search(unit(1, 1), "pump", limit=0) == []


def test_searches_run_while_chunks_are_added() -> None:
    chunks = random_chunks(2000, seed=9)
    index = ChunkIndex(16)
    index.add(chunks[:100])
    failures: list[BaseException] = []
    done = threading.Event()

    def search() -> None:
        while not done.is_set():
            try:
                for mode in MODES:
                    hits = index.search(chunks[0].vector, chunks[0].text, limit=5, mode=mode)
                    assert hits
                    assert hits[0].chunk_id == chunks[0].chunk_id
            except BaseException as exc:  # reported by the main thread
                failures.append(exc)
                return

    threads = [threading.Thread(target=search) for _ in range(3)]
    for thread in threads:
        thread.start()
    for at in range(100, 2000, 50):
        index.add(chunks[at : at + 50])
    done.set()
    for thread in threads:
        thread.join()

    assert failures == []
    assert len(index) == 2000
