"""``ApproximateIndex``: exact below the threshold, an HNSW graph from it on; recall against
exact search, removal, file filters, hybrid search, searches during changes, and the graph built
in the background (exact searches until it serves, rebuilds, shrinking, removals racing it,
a failing build)."""

from __future__ import annotations

import logging
import sys
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
WAIT = 120.0  # seconds a test waits for a builder at most (a hang fails, it is no speed test)


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
    """The chunks in an approximate index (its graph built) and in an exact one."""
    approximate, exact = ApproximateIndex(DIMENSIONS, threshold=threshold), ChunkIndex(DIMENSIONS)
    for at in range(0, len(chunks), 500):
        approximate.add(chunks[at : at + 500])
        exact.add(chunks[at : at + 500])
    assert approximate.wait_ready(WAIT)
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
    assert not index.building  # no builder below the threshold
    index.add(corpus.chunks(1, start=999, files=10))
    assert index.wait_ready(WAIT)
    assert index.approximate
    assert not index.building

    index.remove_files([f"file-{i}" for i in range(5)])  # 500 left: half the threshold
    assert len(index) == 500
    assert index.approximate
    index.remove_files(["file-5"])
    assert not index.approximate  # at once, not when the builder gets to it
    assert index.wait_ready(WAIT)
    assert index.nbytes == index.exact.nbytes


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
    assert index.wait_ready(WAIT)
    index.remove_files([f"file-{i}" for i in range(5)])  # 1500 left, 2500 removed
    assert index.approximate
    assert index.wait_ready(WAIT)
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
    assert index.wait_ready(WAIT)
    assert index.approximate
    assert len(index) == len(mirror)
    for _ in range(20):
        vector, text = corpus.query()
        hits = index.search(vector, text, limit=10, mode="vector")
        assert recall(hits, mirror.search(vector, text, limit=10, mode="vector")) >= 0.8


# --- the builder: the graph is built in the background ---------------------------------------


def own_vector_search(index: ApproximateIndex, chunks: Sequence[IndexedChunk]) -> list[Hit]:
    """Each chunk searched by its own vector: a chunk still held is found first (exactly; the
    graph almost always finds it)."""
    return [index.search(c.vector, c.text, limit=1, mode="vector")[0] for c in chunks]


def found_first(index: ApproximateIndex, chunks: Sequence[IndexedChunk]) -> float:
    """The share of ``chunks`` their own vector finds first."""
    hits = own_vector_search(index, chunks)
    return float(np.mean([h.chunk_id == c.chunk_id for h, c in zip(hits, chunks, strict=True)]))


def same_as_exact(index: ApproximateIndex, exact: ChunkIndex, corpus: Corpus) -> None:
    for _ in range(5):
        vector, text = corpus.query()
        for mode in MODES:
            hits = index.search(vector, text, limit=10, mode=mode)
            assert hits == exact.search(vector, text, limit=10, mode=mode)


def test_searches_are_exact_until_a_fresh_graph_holds_every_row() -> None:
    corpus = Corpus(12)
    chunks = corpus.chunks(3000)
    index = ApproximateIndex(DIMENSIONS, threshold=1000, background=False)
    exact = ChunkIndex(DIMENSIONS)
    index.add(chunks)  # returns with no graph work done: the steps are ours to run
    exact.add(chunks)

    steps = 0
    while not index.build(1):  # a slice of rows a step, into a graph that does not serve yet
        steps += 1
        assert not index.approximate
        same_as_exact(index, exact, corpus)
    assert steps >= 3000 // 512
    assert index.approximate
    assert index.build()  # caught up: nothing left

    more = corpus.chunks(700, start=3000)
    index.add(more)  # a serving graph keeps serving; rows past it are scored exactly
    assert index.approximate
    assert found_first(index, more[::10]) == 1  # the new rows are scored exactly
    assert not index.build(1)  # extending it
    assert index.build()
    assert found_first(index, more[::10]) >= 0.95


def test_add_returns_before_the_builder_thread_is_done_and_searches_stay_correct() -> None:
    corpus = Corpus(13)
    chunks = corpus.chunks(4000)
    index, exact = ApproximateIndex(DIMENSIONS, threshold=1000), ChunkIndex(DIMENSIONS)
    exact.add(chunks)
    index.add(chunks)  # one call: the exact index holds them all when it returns

    assert len(index) == 4000
    while not index.wait_ready(0):
        for mode in MODES:
            vector, text = corpus.query()
            hits = index.search(vector, text, limit=10, mode=mode)
            if not index.approximate:  # no graph served during that search: it was exact
                assert hits == exact.search(vector, text, limit=10, mode=mode)
        assert found_first(index, chunks[:20]) >= 0.9
    assert index.approximate
    assert not index.building
    assert index.error is None


def test_a_rebuild_builds_beside_the_serving_graph_then_swaps() -> None:
    corpus = Corpus(14)
    chunks = corpus.chunks(4000, files=8)
    index = ApproximateIndex(DIMENSIONS, threshold=1000, background=False)
    index.add(chunks)
    assert index.build()
    before = index.nbytes - index.exact.nbytes  # the graph's bytes

    gone = {f"file-{i}" for i in range(5)}
    index.remove_files(gone)  # 1500 left, 2500 tombstones: rebuilt
    kept = [c for c in chunks if c.file_id not in gone]
    steps = 0
    while not index.build(1):
        steps += 1
        assert index.approximate  # the old graph serves all along
        assert found_first(index, kept[::50]) >= 0.9
    assert steps >= 1500 // 512
    assert index.approximate
    assert 0 < index.nbytes - index.exact.nbytes < before  # the old graph went at the swap
    assert found_first(index, kept) >= 0.98
    hits = own_vector_search(index, chunks[::100])
    assert not {h.file_id for h in hits} & gone


def test_shrinking_below_half_the_threshold_stops_a_build() -> None:
    corpus = Corpus(15)
    chunks = corpus.chunks(3000, files=10)
    index = ApproximateIndex(DIMENSIONS, threshold=1000, background=False)
    index.add(chunks)
    assert not index.build(2)  # a fresh graph, partly built
    assert index.nbytes > index.exact.nbytes

    index.remove_files([f"file-{i}" for i in range(9)])  # 300 left
    assert not index.approximate
    assert index.nbytes == index.exact.nbytes  # the fresh graph is gone
    assert index.build(1)  # and nothing is left to do

    index.add(corpus.chunks(1000, start=3000))  # past the threshold again: a new graph
    assert not index.build(1)
    assert index.build()
    assert index.approximate


def test_shrinking_stops_the_builder_thread() -> None:
    corpus = Corpus(16)
    index = ApproximateIndex(DIMENSIONS, threshold=1000)
    index.add(corpus.chunks(6000, files=20))  # the builder starts
    index.remove_files([f"file-{i}" for i in range(19)])  # 300 left: below half the threshold

    assert not index.approximate
    assert index.wait_ready(WAIT)
    assert not index.approximate
    assert not index.building
    assert index.nbytes == index.exact.nbytes


def test_removals_racing_the_builder_never_return_removed_chunks() -> None:
    corpus = Corpus(17)
    chunks = corpus.chunks(5000, files=50)
    index, mirror = ApproximateIndex(DIMENSIONS, threshold=1000), ChunkIndex(DIMENSIONS)
    mirror.add(chunks)
    index.add(chunks)  # the builder starts
    removed: set[str] = set()  # files whose removal has returned
    failures: list[BaseException] = []
    done = threading.Event()

    def search() -> None:
        probes = chunks[1::37]  # some of every file
        while not done.is_set():
            try:
                for chunk in probes:
                    already = set(removed)  # removed before this search began
                    for mode in MODES:
                        hits = index.search(chunk.vector, chunk.text, limit=5, mode=mode)
                        assert not {h.file_id for h in hits} & already
            except BaseException as exc:  # reported by the main thread
                failures.append(exc)
                return

    searcher = threading.Thread(target=search)
    searcher.start()
    for i in range(1, 50, 2):  # half the files, one at a time, while the graph is being built
        index.remove_files([f"file-{i}"])
        mirror.remove_files([f"file-{i}"])
        removed.add(f"file-{i}")
    assert index.wait_ready(WAIT)
    done.set()
    searcher.join()

    assert failures == []
    assert index.approximate
    assert len(index) == len(mirror) == 2500
    hits = own_vector_search(index, chunks[::3])  # a removed chunk's vector would find it
    assert not {h.file_id for h in hits} & removed
    # the graph this race leaves depends on the threads' timing (usearch adds on every core):
    # 0.998-1.0 alone and with both cores loaded, 0.978 once in a full suite's run
    assert found_first(index, [c for c in chunks[1::3] if c.file_id not in removed]) >= 0.97


def test_removals_between_builder_steps_never_return_removed_chunks() -> None:
    corpus = Corpus(18)
    chunks = corpus.chunks(3000, files=30)
    index = ApproximateIndex(DIMENSIONS, threshold=1000, background=False)
    index.add(chunks)
    gone: set[str] = set()
    for i in range(10):  # each removal lands after one more slice: in the graph, or not yet
        index.build(1)
        index.remove_files([f"file-{i}"])
        gone.add(f"file-{i}")
    assert index.build()
    assert index.approximate

    hits = own_vector_search(index, chunks[::3])  # a removed chunk's vector would find it
    assert not {h.file_id for h in hits} & gone
    assert found_first(index, [c for c in chunks[1::3] if c.file_id not in gone]) >= 0.98


def test_a_failing_build_is_logged_and_searches_stay_exact(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "usearch.index", None)  # usearch cannot be imported
    corpus = Corpus(19)
    chunks = corpus.chunks(1500)
    index, exact = ApproximateIndex(DIMENSIONS, threshold=1000), ChunkIndex(DIMENSIONS)
    exact.add(chunks)
    with caplog.at_level(logging.ERROR, logger="agentloom.retrieval.graph_builder"):
        index.add(chunks)
        assert index.wait_ready(WAIT)

    assert isinstance(index.error, ImportError)
    assert [r.exc_info is not None for r in caplog.records] == [True]
    assert "searches exactly" in caplog.records[0].getMessage()
    assert not index.approximate
    same_as_exact(index, exact, corpus)
    index.add(corpus.chunks(100, start=1500))  # not retried: no builder, no new log
    assert not index.building
    assert len(caplog.records) == 1


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
