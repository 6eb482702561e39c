"""The chunks of one file while it is ingested, held in bounded memory.

A chunk's text is a span of the file's text (kept once, not copied per chunk), and its vector
goes to an anonymous temporary file as soon as it is embedded: the process holds the file's text,
its chunks' offsets and one batch, whatever the number of chunks (a 50,000-chunk file's vectors
are 77 MB on disk, not in memory). The final write reads them back a batch at a time.
The temporary file has no name (it disappears with the spool, or with the process).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from typing import Final

import numpy as np
from numpy.typing import NDArray

from agentloom.retrieval.chunking import Span
from agentloom.storage.vector_stores_base import NewChunk

__all__ = ["WRITE_BATCH", "ChunkSpool"]

WRITE_BATCH: Final = 500  # chunks per insert statement of the final write


class ChunkSpool:
    """``text``'s chunks at ``spans``, their vectors added in order with :meth:`add`."""

    def __init__(self, text: str, spans: Sequence[Span]) -> None:
        self._text = text
        self._spans = spans
        self._file = tempfile.TemporaryFile(prefix="agentloom-chunks-")  # noqa: SIM115
        self._added = 0
        self._row_bytes = 0
        self.usage_bytes = 0  # the chunks' text (UTF-8) and vector bytes so far

    def __enter__(self) -> ChunkSpool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return len(self._spans)

    @property
    def added(self) -> int:
        """Chunks whose vectors were added."""
        return self._added

    def texts(self, start: int, stop: int) -> list[str]:
        return [self._slice(span) for span in self._spans[start:stop]]

    def add(self, vectors: NDArray[np.float32]) -> None:
        """The vectors of the next ``len(vectors)`` chunks."""
        rows = np.ascontiguousarray(vectors, dtype="<f4")
        if self._added + len(rows) > len(self._spans):
            raise ValueError("more vectors than chunks")
        self._row_bytes = rows.shape[1] * rows.itemsize
        self._file.write(rows.tobytes())
        texts = self.texts(self._added, self._added + len(rows))
        self.usage_bytes += sum(len(t.encode()) for t in texts) + rows.nbytes
        self._added += len(rows)

    def batches(self, size: int = WRITE_BATCH) -> Iterator[list[NewChunk]]:
        """Every chunk added so far, in order, ``size`` at a time (from the first each call)."""
        self._file.flush()
        self._file.seek(0)
        row = self._row_bytes
        for start in range(0, self._added, size):
            stop = min(start + size, self._added)
            data = self._file.read((stop - start) * row)
            yield [self._chunk(at, data[(at - start) * row :][:row]) for at in range(start, stop)]
        self._file.seek(0, 2)  # the next add appends

    def close(self) -> None:
        self._file.close()

    def _chunk(self, at: int, vector: bytes) -> NewChunk:
        return NewChunk(position=at, text=self._slice(self._spans[at]), vector=vector)

    def _slice(self, span: Span) -> str:
        return self._text[span.start : span.end]
