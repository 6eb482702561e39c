"""The spool of a file's chunks during ingestion: texts are spans of the file's text, vectors
come back from the temporary file in order, in batches, as many times as the write asks."""

from __future__ import annotations

import numpy as np
import pytest

from agentloom.retrieval.chunking import chunk_spans
from agentloom.services.vector_stores.chunk_spool import ChunkSpool

TEXT = " ".join(f"Sentence {n} about the café number {n}." for n in range(300))


def _vectors(start: int, stop: int) -> np.ndarray:
    rows = np.arange(start, stop, dtype=np.float32)[:, None]
    return np.repeat(rows, 4, axis=1) + np.arange(4, dtype=np.float32)


def test_chunks_come_back_in_order_a_batch_at_a_time_and_again() -> None:
    spans = chunk_spans(TEXT, max_tokens=20, overlap=5)
    with ChunkSpool(TEXT, spans) as spool:
        for start in range(0, len(spool), 7):  # embedded 7 at a time
            spool.add(_vectors(start, min(start + 7, len(spool))))

        first = [chunk for batch in spool.batches(10) for chunk in batch]
        again = [chunk for batch in spool.batches(10) for chunk in batch]
        sizes = [len(batch) for batch in spool.batches(10)]

    assert spool.added == len(spans) > 20
    assert first == again  # a retried write reads the same chunks
    assert [c.position for c in first] == list(range(len(spans)))
    assert [c.text for c in first] == [TEXT[s.start : s.end] for s in spans]
    vectors = np.frombuffer(b"".join(c.vector for c in first), dtype="<f4").reshape(-1, 4)
    np.testing.assert_array_equal(vectors, _vectors(0, len(spans)))
    assert sizes[:-1] == [10] * (len(sizes) - 1)
    usage = sum(len(TEXT[s.start : s.end].encode()) + 16 for s in spans)
    assert spool.usage_bytes == usage  # UTF-8 text ("café") and float32 vectors


def test_a_spool_takes_no_more_vectors_than_chunks() -> None:
    spans = chunk_spans(TEXT, max_tokens=20, overlap=5)
    with ChunkSpool(TEXT, spans) as spool:
        spool.add(_vectors(0, len(spans) - 1))
        assert [len(b) for b in spool.batches(len(spans))] == [len(spans) - 1]
        spool.add(_vectors(0, 1))  # adding after a read appends
        with pytest.raises(ValueError, match="more vectors than chunks"):
            spool.add(_vectors(0, 1))
        assert spool.added == len(spans)
