"""``ApproximateIndex``: exact below the threshold, an HNSW graph from it on; recall against
exact search, removal, file filters, hybrid search, searches during changes."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest
from numpy.typing import NDArray

from agentloom.retrieval.ann import ApproximateIndex
from agentloom.retrieval.index import ChunkIndex, Hit, IndexedChunk, SearchMode
from agentloom.retrieval.vector_index import IndexOptions, build_index

MODES: list[SearchMode] = ["vector", "keyword", "hybrid"]
DIMENSIONS = 48
TOPICS = 60
F32 = NDArray[np.float32]


def ids(hits: Sequence[Hit]) -> list[int]:
    return [h.chunk_id for h in hits]


class Corpus:
    """Structured vectors, like the bench's synthetic chunks: each chunk mixes 2-4 of a set of
    topics (plus noise), a query is one topic (plus noise). Uniform random vectors would make
    every neighbour about as near as the next, and recall meaningless."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.topics = self.rng.standard_normal((TOPICS, DIMENSIONS)).astype(np.float32)
        self.words = [f"word{chr(97 + i % 26)}{chr(97 + i // 26)}" for i in range(TOPICS)]

    def chunks(self, count: int, start: int = 0, files: int = 40) -> list[IndexedChunk]:
        out = []
        for i in range(start, start + count):
            picked = self.rng.choice(TOPICS, size=int(self.rng.integers(2, 5)), replace=False)
            vector = self.topics[picked].mean(axis=0) + 0.3 * self._noise()
            text = " ".join(self.words[j] for j in picked)
            out.append(IndexedChunk(i, f"file-{i % files}", text, vector.astype(np.float32)))
        return out

    def query(self) -> tuple[F32, str]:
        topic = int(self.rng.integers(TOPICS))
        return (self.topics[topic] + 0.5 * self._noise()).astype(np.float32), self.words[topic]

    def _noise(self) -> F32:
        return self.rng.standard_normal(DIMENSIONS).astype(np.float32)


def both(chunks: Sequence[IndexedChunk], threshold: int) -> tuple[ApproximateIndex, ChunkIndex]:
    approximate, exact = ApproximateIndex(DIMENSIONS, threshold=threshold), ChunkIndex(DIMENSIONS)
    for at in range(0, len(chunks), 500):
        approximate.add(chunks[at : at + 500])
        exact.add(chunks[at : at + 500])
    return approximate, exact


def recall(found: Sequence[Hit], expected: Sequence[Hit]) -> float:
    return len(set(ids(found)) & set(ids(expected))) / len(expected)


# --- below the threshold: the exact index ----------------------------------------------------


def test_below_the_threshold_every_search_is_the_exact_ones() -> None:
    corpus = Corpus(1)
    approximate, exact = both(corpus.chunks(900), threshold=1000)

    assert not approximate.approximate
    for _ in range(10):
        vector, text = corpus.query()
        for mode in MODES:
            for files in (None, ["file-3", "file-7"]):
                a = approximate.search(vector, text, limit=10, mode=mode, files=files)
                assert a == exact.search(vector, text, limit=10, mode=mode, files=files)


def test_the_graph_comes_at_the_threshold_and_goes_below_half_of_it() -> None:
    corpus = Corpus(2)
    index = ApproximateIndex(DIMENSIONS, threshold=1000)
    index.add(corpus.chunks(999, files=10))
    assert not index.approximate
    index.add(corpus.chunks(1, start=999, files=10))
    assert index.approximate

    index.remove_files([f"file-{i}" for i in range(5)])  # 500 left: half the threshold
    assert len(index) == 500
    assert index.approximate
    index.remove_files(["file-5"])
    assert not index.approximate


def test_the_default_kind_switches_at_the_configured_threshold() -> None:
    assert isinstance(build_index(4), ApproximateIndex)
    assert isinstance(build_index(4, "exact"), ChunkIndex)
    index = build_index(DIMENSIONS, options=IndexOptions(ann_threshold=300))
    assert isinstance(index, ApproximateIndex)
    assert index.threshold == 300
    with pytest.raises(ValueError, match="positive"):
        ApproximateIndex(4, threshold=0)


# --- past the threshold: the graph -----------------------------------------------------------


def test_recall_at_10_against_exact_search() -> None:
    corpus = Corpus(3)
    approximate, exact = both(corpus.chunks(4000), threshold=1000)
    assert approximate.approximate

    found = []
    for _ in range(100):
        vector, text = corpus.query()
        hits = approximate.search(vector, text, limit=10, mode="vector")
        expected = exact.search(vector, text, limit=10, mode="vector")
        found.append(recall(hits, expected))
        by_id = {h.chunk_id: h.score for h in expected}
        for hit in hits:  # scores are the exact cosines, not the graph's 8-bit ones
            if hit.chunk_id in by_id:
                assert hit.score == pytest.approx(by_id[hit.chunk_id], abs=1e-6)
    assert np.mean(found) >= 0.95


def test_hybrid_fuses_the_graphs_candidates_with_keywords() -> None:
    corpus = Corpus(4)
    approximate, exact = both(corpus.chunks(3000), threshold=1000)

    agreed = []
    for _ in range(50):
        vector, text = corpus.query()
        hits = approximate.search(vector, text, limit=10, mode="hybrid")
        assert len(hits) == 10
        assert all(0 <= h.score <= 1 for h in hits)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        agreed.append(recall(hits, exact.search(vector, text, limit=10, mode="hybrid")))
        keyword = approximate.search(vector, text, limit=10, mode="keyword")
        assert keyword == exact.search(vector, text, limit=10, mode="keyword")
    assert np.mean(agreed) >= 0.95


def test_removed_chunks_are_never_returned() -> None:
    corpus = Corpus(5)
    chunks = corpus.chunks(3000)
    approximate, exact = both(chunks, threshold=1000)
    gone = {f"file-{i}" for i in range(0, 40, 3)}

    removed = approximate.remove_files([*gone, "nope"])
    assert removed == exact.remove_files(gone) == sum(c.file_id in gone for c in chunks)
    assert len(approximate) == len(exact) == 3000 - removed
    assert approximate.approximate

    for chunk in chunks[:300]:  # a removed chunk's own vector would find it first
        for mode in MODES:
            hits = approximate.search(chunk.vector, chunk.text, limit=10, mode=mode)
            assert len(hits) == 10
            assert not {h.file_id for h in hits} & gone


def test_the_graph_is_rebuilt_when_removals_outnumber_its_rows() -> None:
    corpus = Corpus(6)
    chunks = corpus.chunks(4000, files=8)
    index = ApproximateIndex(DIMENSIONS, threshold=1000)
    index.add(chunks)
    index.remove_files([f"file-{i}" for i in range(5)])  # 1500 left, 2500 removed
    assert index.approximate

    exact = ChunkIndex(DIMENSIONS)
    exact.add([c for c in chunks if c.file_id not in {f"file-{i}" for i in range(5)}])
    for _ in range(30):
        vector, text = corpus.query()
        hits = index.search(vector, text, limit=10, mode="vector")
        assert recall(hits, exact.search(vector, text, limit=10, mode="vector")) >= 0.8


# --- file filters ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_a_filter_allowing_few_chunks_is_searched_exactly(mode: SearchMode) -> None:
    corpus = Corpus(7)
    approximate, exact = both(corpus.chunks(4000), threshold=1000)
    files = [f"file-{i}" for i in range(5)]  # 500 chunks, under the threshold

    for _ in range(20):
        vector, text = corpus.query()
        hits = approximate.search(vector, text, limit=10, mode=mode, files=files)
        assert hits == exact.search(vector, text, limit=10, mode=mode, files=files)


@pytest.mark.parametrize("share", [0.3, 0.8])
def test_a_filter_allowing_many_chunks_goes_through_the_graph(share: float) -> None:
    corpus = Corpus(8)
    approximate, exact = both(corpus.chunks(5000), threshold=1000)
    files = {f"file-{i}" for i in range(int(40 * share))}

    found = []
    for _ in range(50):
        vector, text = corpus.query()
        hits = approximate.search(vector, text, limit=10, mode="vector", files=files)
        assert len(hits) == 10
        assert {h.file_id for h in hits} <= files
        found.append(recall(hits, exact.search(vector, text, limit=10, files=files, mode="vector")))
    assert np.mean(found) >= 0.95


def test_a_filter_of_unknown_files_finds_nothing() -> None:
    corpus = Corpus(9)
    approximate, _ = both(corpus.chunks(2000), threshold=1000)
    vector, text = corpus.query()

    for mode in MODES:
        assert approximate.search(vector, text, limit=5, mode=mode, files=["nope"]) == []
        assert approximate.search(vector, text, limit=5, mode=mode, files=[]) == []
    assert approximate.search(vector, text, limit=0) == []


# --- concurrency -----------------------------------------------------------------------------


def test_searches_run_while_chunks_are_added_and_removed() -> None:
    corpus = Corpus(10)
    chunks = corpus.chunks(6000, files=60)
    index = ApproximateIndex(DIMENSIONS, threshold=1000)
    mirror = ChunkIndex(DIMENSIONS)
    for each in (index, mirror):
        each.add(chunks[:1500])
    target = chunks[0]
    failures: list[BaseException] = []
    done = threading.Event()

    def search() -> None:
        while not done.is_set():
            try:
                for mode in MODES:
                    hits = index.search(target.vector, target.text, limit=5, mode=mode)
                    assert len(hits) == 5
                    assert mode != "vector" or hits[0].chunk_id == target.chunk_id
            except BaseException as exc:  # reported by the main thread
                failures.append(exc)
                return

    threads = [threading.Thread(target=search) for _ in range(3)]
    for thread in threads:
        thread.start()
    for at in range(1500, 6000, 300):
        for each in (index, mirror):
            each.add(chunks[at : at + 300])
            each.remove_files([f"file-{at // 300}"])  # never file-0, the target's
    done.set()
    for thread in threads:
        thread.join()

    assert failures == []
    assert index.approximate
    assert len(index) == len(mirror)
    for _ in range(20):
        vector, text = corpus.query()
        hits = index.search(vector, text, limit=10, mode="vector")
        assert recall(hits, mirror.search(vector, text, limit=10, mode="vector")) >= 0.8


# --- serials: how the graph names rows -------------------------------------------------------


def test_serials_name_the_same_chunk_however_rows_move() -> None:
    corpus = Corpus(11)
    chunks = corpus.chunks(700, files=7)
    index = ChunkIndex(DIMENSIONS)
    for at in range(0, 700, 90):
        index.add(chunks[at : at + 90])
    assert index.serials_of(["file-3"]).tolist() == list(range(3, 700, 7))

    index.remove_files(["file-0", "file-3"])
    query = index.query(None, "")
    assert query is not None
    snapshot = query.snapshot
    serials = np.array([699, 1, 3, 350, 5, 10_000], dtype=np.int64)  # 3, 350: removed
    rows = snapshot.rows_of(serials)
    hits = query.hits((rows, np.ones(len(rows))))
    assert [h.chunk_id for h in hits] == [699, 1, 5]  # chunk i has serial i here
    newest = snapshot.rows_from(690)
    assert [h.chunk_id for h in query.hits((newest, np.ones(len(newest))))] == [
        i for i in range(690, 700) if i % 7 not in (0, 3)
    ]
    served = np.concatenate([s for s, _ in index.vectors_from(600)])
    assert served.tolist() == [i for i in range(600, 700) if i % 7 not in (0, 3)]
