"""``GraphBuilder``: keeps an ``ApproximateIndex``'s HNSW graph current, in a thread of its own.

What it keeps (``agentloom.retrieval.ann`` searches through ``serving``):

- no graph while the exact index holds fewer than ``threshold`` rows. From there on a fresh graph
  is built; it serves once it holds every row (its next slice is empty), and until then searches
  are exact;
- a serving graph is extended with the rows added since (a search scores the rows past its
  ``upto`` exactly), and removed rows are removed from it (usearch keeps them as tombstones);
- when its tombstones outnumber its rows, a fresh graph is built while the old one still serves,
  then takes its place (the swap is one assignment: no search goes without a graph meanwhile);
- below half the threshold every graph is dropped, at once; a build running then stops after
  its current slice.

The work runs a ``SLICE`` of rows at a time in one builder thread per index at most, started by
``added``/``removed`` when there is work and none runs, and ending when there is none left
(``wait`` waits for that). With ``background=False`` no thread is started: the caller runs the
steps (``run``), e.g. a test that wants each one under its control.

Threads. The exact index's writers (``add``/``remove_files``) are serialised by its caller and
publish each change as a new snapshot (one assignment of immutable segments). The builder only
reads the exact index, through whichever snapshot is current when it reads (no lock needed).

- The builder is the only writer of the graphs (``Graph.add``/``remove`` and their counters
  ``upto``, ``live``, ``removed``). Searches call ``Graph.nearest`` at any time: the graph's own
  lock serialises every usearch call (usearch may grow its storage while adding).
- ``_lock`` guards the builder's state: the serving graph, the fresh one, the removals not yet
  applied, the thread and the failure. It is never held around usearch work: a writer takes it to
  hand over work and start the thread; the builder takes it once a step, to take the pending
  removals, decide what to do, swap a caught-up fresh graph in, and read its next slice (views of
  the snapshot's arrays). Searches do not take it: they read ``serving`` once (one attribute read)
  and use that graph for the whole search, whatever is swapped in meanwhile.
- No lost wake-up: a writer publishes its change before taking ``_lock``, then starts a thread if
  none runs; the builder decides under ``_lock`` that it has nothing left (no row past its
  graph's ``upto``, no removal) and clears ``_thread`` in the same hold. So either the builder
  sees the change or the writer sees no thread and starts one.
- Removals racing the builder: ``remove_files`` publishes the exact index without the rows, then
  queues their serials; each step takes the queue before reading its slice. A slice read before
  the publication may hold removed rows, but their serials are queued after it, so the next
  step removes them; a slice read after it does not hold them. So no removed row stays live in a
  graph, and none is ever returned anyway: hits are looked up in the search's own snapshot.
- The thread holds only a weak reference to the builder between steps: an index dropped by its
  owner (the index cache evicting a store) stops its build after the current slice, and its
  memory goes with it.

Memory: a rebuild holds the serving graph and the growing fresh one; the old graph is released at
the swap (a search that read it before keeps it until it ends).

Errors in the builder (a bug, usearch failing to load or to allocate) are logged with their
traceback and recorded in ``error``; the graphs are dropped and the index searches exactly from
then on (it is not retried: the store's index is rebuilt when the cache loads it again).
"""

from __future__ import annotations

import logging
import threading
import weakref

import numpy as np
from numpy.typing import NDArray

from agentloom.frozen import frozen
from agentloom.retrieval.graph import SLICE, Graph
from agentloom.retrieval.index import ChunkIndex

__all__ = ["GraphBuilder"]

log = logging.getLogger(__name__)

Serials = NDArray[np.int64]


@frozen
class _Work:
    """One step: removals to apply to the graphs that were alive, and a slice to add to one."""

    removals: list[Serials]
    graphs: list[Graph]
    target: Graph | None
    serials: Serials
    vectors: NDArray[np.float32]

    def run(self) -> None:
        for graph in self.graphs:
            for serials in self.removals:
                graph.remove(serials)
        if self.target is not None and len(self.serials):
            self.target.add(self.serials, self.vectors)


_NO_ROWS: tuple[Serials, NDArray[np.float32]] = (
    np.empty(0, dtype=np.int64),
    np.empty((0, 0), dtype=np.float32),
)


class GraphBuilder:
    def __init__(self, exact: ChunkIndex, threshold: int, *, background: bool = True) -> None:
        self._exact = exact
        self.threshold = threshold
        self.background = background
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._serving: Graph | None = None
        self._fresh: Graph | None = None  # being built, not searched yet
        self._removals: list[Serials] = []
        self._thread: threading.Thread | None = None
        self.error: Exception | None = None

    @property
    def serving(self) -> Graph | None:
        """The graph searches go through; None: searches are exact."""
        return self._serving

    @property
    def building(self) -> bool:
        """Whether the builder thread runs (a graph is being built, extended or pruned)."""
        return self._thread is not None

    @property
    def nbytes(self) -> int:
        graphs = (self._serving, self._fresh)
        return sum(graph.nbytes for graph in graphs if graph is not None)

    # --- the writers' side -----------------------------------------------------------------

    def added(self) -> None:
        """Rows were added to the exact index (already published)."""
        with self._lock:
            self._wake()

    def removed(self, serials: Serials) -> None:
        """The rows with these serials were removed from the exact index (already published)."""
        with self._lock:
            self._shrink()
            if self._serving is not None or self._fresh is not None:
                self._removals.append(serials)
            self._wake()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until no builder thread runs; False if ``timeout`` seconds passed first."""
        with self._idle:
            return self._idle.wait_for(lambda: self._thread is None, timeout)

    def run(self, steps: int | None = None) -> bool:
        """Run the builder's steps in this thread (``background=False`` only), at most
        ``steps`` of them; True when no work is left."""
        if self.background:
            raise RuntimeError("this index builds its graph in its own thread")
        done = 0
        while steps is None or done < steps:
            if not self.step():
                return True
            done += 1
        return False

    def _wake(self) -> None:
        """Start the builder thread if there is work and none runs (``_lock`` held)."""
        if not self.background or self._thread is not None or self.error is not None:
            return
        graphs = self._serving is not None or self._fresh is not None
        if graphs or len(self._exact) >= self.threshold:
            thread = threading.Thread(
                target=_run, args=(weakref.ref(self),), name="agentloom-ann-builder", daemon=True
            )
            try:  # the thread's first step waits for ``_lock``: it cannot end before this
                thread.start()
            except RuntimeError:  # no thread to be had: the caller's change is in all the same
                log.exception("no thread for the HNSW graph's builder; tried again on next change")
                return
            self._thread = thread

    # --- the builder's side ----------------------------------------------------------------

    def step(self) -> bool:
        """Do one step of work; False when there was none (the thread then ends). Only the
        builder thread calls it, or ``run`` without one: the graphs have one writer."""
        try:
            with self._lock:
                work = self._next()
                if work is None:
                    self._stop()
                    return False
            work.run()
            return True
        except Exception as exc:  # the thread's end: logged, and searches go on exactly
            log.exception("building the HNSW graph failed; the index searches exactly from now on")
            with self._lock:
                self.error = exc
                self._serving = self._fresh = None
                self._removals = []
                self._stop()
            return False

    def _stop(self) -> None:
        self._thread = None
        self._idle.notify_all()

    def _next(self) -> _Work | None:
        """The next step's work (``_lock`` held); None when there is none."""
        if self.error is not None:
            return None
        self._shrink()
        removals, self._removals = self._removals, []
        graphs = [graph for graph in (self._serving, self._fresh) if graph is not None]
        target, (serials, vectors) = self._slice()
        if target is None and not removals:
            return None
        return _Work(removals, graphs, target, serials, vectors)

    def _slice(self) -> tuple[Graph | None, tuple[Serials, NDArray[np.float32]]]:
        """The graph to add rows to and its next slice of them, swapping in a fresh graph that
        holds every row."""
        while (target := self._target()) is not None:
            rows = next(self._exact.vectors_from(target.upto), None)
            if rows is not None:
                return target, (rows[0][:SLICE], rows[1][:SLICE])
            if target is not self._fresh:
                break
            self._serving, self._fresh = target, None
        return None, _NO_ROWS

    def _target(self) -> Graph | None:
        serving = self._serving
        if self._fresh is None and (
            serving.removed > serving.live
            if serving is not None
            else len(self._exact) >= self.threshold
        ):
            self._fresh = Graph(self._exact.dimensions)
        return self._fresh or serving

    def _shrink(self) -> None:
        if len(self._exact) < self.threshold // 2:
            self._serving = self._fresh = None
            self._removals = []


def _run(ref: weakref.ReferenceType[GraphBuilder]) -> None:
    """The builder thread: steps until there is no work, or nobody holds the builder."""
    while (builder := ref()) is not None and builder.step():
        del builder
