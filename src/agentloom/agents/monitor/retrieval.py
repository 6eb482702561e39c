"""The ``retrieval_strategy`` axis: which memory entries a tick starts with.

At the start of a tick the memory's entries (:mod:`.memory`) are ranked against the tick's
focus (its input, and the current phase when there is a plan); the chosen ones, at most
``LIMIT`` (8), are shown in the system prompt.

- ``hybrid_with_self_eval``: the entries are put in an in-memory
  :class:`~agentloom.retrieval.index.ChunkIndex` and searched in hybrid mode: BM25 on keywords
  fused (reciprocal rank fusion) with the cosine of hashed character-trigram vectors, which
  match word pieces keywords miss (``replica`` and ``replication``, ``auth`` and
  ``authentication``) with no model or network. Of the best 8, those sharing no keyword with
  the focus and under 0.15 cosine are dropped; the rest are judged by one model call: the
  model answers the numbers of the entries relevant to the work at hand, and only those are
  kept, in rank order. A reply with no list of numbers in it keeps them as ranked.
- ``keyword``: the best 8 entries by BM25 alone that share a keyword with the focus.
- ``semantic``: the best 8 entries by the cosine of sentence embeddings (the vector stores'
  embedder, all-MiniLM-L6-v2 in process by default, or the embedder the strategy is given) of
  at least 0.3: meaning, not shared words (``the car would not start`` recalls ``the
  automobile's battery is dead``). No model call; the embedder is loaded on first use.
- ``recent``: the 8 newest entries, whatever the focus.
- ``none``: nothing is recalled.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final, Protocol

import numpy as np
from numpy.typing import NDArray

from agentloom.agents.monitor.memory import MemoryEntry
from agentloom.agents.monitor.side import SideModel, json_reply
from agentloom.json_types import JSONValue
from agentloom.retrieval.index import ChunkIndex, IndexedChunk, SearchMode
from agentloom.retrieval.keywords import terms

if TYPE_CHECKING:
    from agentloom.retrieval.embeddings import Embedder

__all__ = [
    "LIMIT",
    "RETRIEVAL_STRATEGIES",
    "HybridWithSelfEval",
    "KeywordRetrieval",
    "NoRetrieval",
    "RecentRetrieval",
    "RetrievalStrategy",
    "SemanticRetrieval",
    "hashed_vectors",
]

LIMIT: Final = 8
DIMENSIONS: Final = 512
MIN_SIMILARITY: Final = 0.15  # hybrid: the cosine a candidate sharing no keyword needs
MIN_MEANING: Final = 0.3  # semantic: the embeddings' cosine an entry needs
_FILE: Final = "memory"

SELF_EVAL_INSTRUCTIONS: Final = (
    "You are choosing which of your memories to keep in mind for the work at hand. For each "
    "numbered memory, judge whether it bears on this work: would it change what you do or "
    "what you report? Reply with a JSON array of the numbers of the relevant memories only, "
    "[] when none is."
)


Recalled = list[MemoryEntry]


class RetrievalStrategy(Protocol):
    async def recall(self, focus: str, entries: Sequence[MemoryEntry], side: SideModel) -> Recalled:
        """The entries to show for ``focus``, best first (``entries``: oldest first)."""
        ...


class RecentRetrieval:
    async def recall(self, focus: str, entries: Sequence[MemoryEntry], side: SideModel) -> Recalled:
        return list(reversed(entries[-LIMIT:]))


class KeywordRetrieval:
    async def recall(self, focus: str, entries: Sequence[MemoryEntry], side: SideModel) -> Recalled:
        return [entries[i] for i in ranked(focus, [e.text for e in entries], "keyword")]


class NoRetrieval:
    async def recall(self, focus: str, entries: Sequence[MemoryEntry], side: SideModel) -> Recalled:
        return []


class SemanticRetrieval:
    """Entries near the focus in meaning (module doc); ``embedder``: default MiniLM in process
    (a ``ConfigError`` naming the package to install when its model is missing)."""

    def __init__(self, embedder: Embedder | None = None) -> None:
        self.embedder = embedder if embedder is not None else _default_embedder()

    async def recall(self, focus: str, entries: Sequence[MemoryEntry], side: SideModel) -> Recalled:
        if not entries:
            return []
        vectors = await self.embedder.embed([focus, *(entry.text for entry in entries)])
        scores = vectors[1:] @ vectors[0]
        best = [int(i) for i in np.argsort(-scores, kind="stable")[:LIMIT]]
        return [entries[i] for i in best if scores[i] >= MIN_MEANING]


def _default_embedder() -> Embedder:
    from agentloom.retrieval.embeddings import MiniLMEmbedder

    return MiniLMEmbedder()  # float32: the model loads on the first recall with entries


class HybridWithSelfEval:
    async def recall(self, focus: str, entries: Sequence[MemoryEntry], side: SideModel) -> Recalled:
        candidates = [entries[i] for i in ranked(focus, [e.text for e in entries], "hybrid")]
        if not candidates:
            return []
        reply = await side.ask(SELF_EVAL_INSTRUCTIONS, _judge_request(focus, candidates))
        chosen = _chosen(json_reply(reply), len(candidates))
        return candidates if chosen is None else [candidates[i] for i in chosen]


def ranked(focus: str, texts: Sequence[str], mode: SearchMode) -> list[int]:
    """The positions of the best ``LIMIT`` of ``texts`` for ``focus`` by the index's ``mode``
    search; hybrid drops those with neither a shared keyword nor ``MIN_SIMILARITY``."""
    if not texts:
        return []
    index = ChunkIndex(DIMENSIONS)
    vectors = hashed_vectors(texts)
    index.add([IndexedChunk(i, _FILE, text, vectors[i]) for i, text in enumerate(texts)])
    query = hashed_vectors([focus])[0]
    hits = [hit.chunk_id for hit in index.search(query, focus, limit=LIMIT, mode=mode)]
    if mode != "hybrid":
        return hits
    near = _similar(vectors[hits], query) | _sharing(focus, [texts[i] for i in hits])
    return [i for i, kept in zip(hits, near, strict=True) if kept]


def _similar(vectors: NDArray[np.float32], query: NDArray[np.float32]) -> NDArray[np.bool_]:
    norms = np.linalg.norm(vectors, axis=1) * float(np.linalg.norm(query))
    dots = np.einsum("ij,j->i", vectors, query)
    return np.asarray(dots >= MIN_SIMILARITY * np.where(norms > 0, norms, np.inf))


def _sharing(focus: str, texts: Sequence[str]) -> NDArray[np.bool_]:
    wanted = set(terms(focus))
    return np.array([bool(wanted & set(terms(text))) for text in texts], dtype=np.bool_)


def hashed_vectors(texts: Sequence[str]) -> NDArray[np.float32]:
    """One row per text: its keyword terms' character trigrams, hashed into ``DIMENSIONS``
    signed buckets (feature hashing): texts sharing word pieces point the same way."""
    vectors = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    for row, text in enumerate(texts):
        for gram in _trigrams(text):
            code = zlib.crc32(gram.encode())
            vectors[row, code % DIMENSIONS] += -1.0 if code >> 31 else 1.0
    return vectors


def _trigrams(text: str) -> list[str]:
    padded = [f" {term} " for term in terms(text)]
    return [word[i : i + 3] for word in padded for i in range(len(word) - 2)]


def _judge_request(focus: str, candidates: Sequence[MemoryEntry]) -> str:
    listed = "\n".join(f"{n}. {entry.line}" for n, entry in enumerate(candidates, start=1))
    return f"The work at hand:\n{focus}\n\nYour memories:\n{listed}"


def _chosen(reply: JSONValue, count: int) -> list[int] | None:
    """The 0-based positions the model judged relevant, in rank order; None when the reply is
    not a list of numbers."""
    if not isinstance(reply, list):
        return None
    numbers = {n for n in reply if isinstance(n, int) and not isinstance(n, bool)}
    if reply and not numbers:
        return None
    return [i for i in range(count) if i + 1 in numbers]


RETRIEVAL_STRATEGIES: dict[str, Callable[[], RetrievalStrategy]] = {
    "hybrid_with_self_eval": HybridWithSelfEval,
    "keyword": KeywordRetrieval,
    "semantic": SemanticRetrieval,
    "none": NoRetrieval,
    "recent": RecentRetrieval,
}
