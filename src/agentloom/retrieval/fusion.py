"""Ranking helpers: top-k selection and weighted reciprocal rank fusion.

Weighted RRF of a row ranked ``r_e`` by the vector side and ``r_t`` by the keyword side (1-based;
a side that did not rank the row adds nothing)::

    rrf(row) = w_e / (k + r_e) + w_t / (k + r_t)
    score    = rrf(row) / ((w_e + w_t) / (k + 1))

so a row ranked first by both sides scores 1.0, and every score lies in 0..1.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from agentloom.frozen import frozen

__all__ = ["RRF_K", "Ranking", "fuse", "top"]

RRF_K = 60.0


@frozen
class Ranking:
    rows: NDArray[np.intp]  # best first
    weight: float


def top(
    scores: NDArray[np.float32], count: int, rows: NDArray[np.intp] | None = None
) -> NDArray[np.intp]:
    """The ``count`` best of ``rows`` (default: all) by ``scores``, best first, ties by row."""
    pool = scores if rows is None else scores[rows]
    picked = np.arange(len(pool))
    if count < len(pool):
        picked = np.argpartition(pool, len(pool) - count)[len(pool) - count :]
    chosen = picked if rows is None else rows[picked]
    order = np.lexsort((chosen, -pool[picked]))
    result: NDArray[np.intp] = chosen[order]
    return result


def fuse(
    rankings: Sequence[Ranking], limit: int, k: float = RRF_K
) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """The ``limit`` best rows by weighted RRF, and their 0..1 scores."""
    total = sum(r.weight for r in rankings)
    if total <= 0 or limit <= 0:
        return np.empty(0, dtype=np.intp), np.empty(0)
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, row in enumerate(ranking.rows.tolist(), start=1):
            fused[row] = fused.get(row, 0.0) + ranking.weight / (k + rank)
    rows = np.fromiter(fused, dtype=np.intp, count=len(fused))
    scores = np.fromiter(fused.values(), dtype=np.float64, count=len(fused))
    best = np.lexsort((rows, -scores))[:limit]
    return rows[best], scores[best] * (k + 1) / total
