"""A monitor's four strategy axes and the choice made on each, checked against their tables.

============================= ============================================ =====================
axis                          choices (the first is the default)           module
============================= ============================================ =====================
``memory_extraction``         ``causality_graph``, ``scratchpad``,         :mod:`.memory`
                              ``structured_json``, ``none``, ``notes``
``observation_compression``   ``summarize``, ``truncate``, ``none``        :mod:`.compression`
``retrieval_strategy``        ``hybrid_with_self_eval``, ``keyword``,      :mod:`.retrieval`
                              ``semantic``, ``none``, ``recent``
``task_decomposition``        ``phased``, ``monolithic``,                  :mod:`.decomposition`,
                              ``hierarchical``, ``single``                 :mod:`.hierarchy`
============================= ============================================ =====================

The seed's (OpenJarvis's) choices come first on each axis; ``notes``, ``recent`` and ``single``
(the same as ``monolithic``) are agentloom's own.

An unknown axis or choice is an :class:`~agentloom.errors.InvalidRequestError` naming the axis
(its ``param``) and what is known.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import asdict, fields

from agentloom.agents.monitor.compression import OBSERVATION_COMPRESSIONS, ObservationCompression
from agentloom.agents.monitor.decomposition import TASK_DECOMPOSITIONS, TaskDecomposition
from agentloom.agents.monitor.memory import MEMORY_EXTRACTIONS, MemoryExtraction
from agentloom.agents.monitor.retrieval import RETRIEVAL_STRATEGIES, RetrievalStrategy
from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen

__all__ = ["AXES", "MonitorStrategies"]

AXES: dict[str, Collection[str]] = {
    "memory_extraction": MEMORY_EXTRACTIONS.keys(),
    "observation_compression": OBSERVATION_COMPRESSIONS.keys(),
    "retrieval_strategy": RETRIEVAL_STRATEGIES.keys(),
    "task_decomposition": TASK_DECOMPOSITIONS.keys(),
}


@frozen
class MonitorStrategies:
    """The choice on each axis; the defaults are the long-horizon ones."""

    memory_extraction: str = "causality_graph"
    observation_compression: str = "summarize"
    retrieval_strategy: str = "hybrid_with_self_eval"
    task_decomposition: str = "phased"

    def __post_init__(self) -> None:
        for axis in fields(self):
            choice, known = getattr(self, axis.name), AXES[axis.name]
            if choice not in known:
                raise InvalidRequestError(
                    f"unknown {axis.name} {choice!r} for monitor_operative; known: "
                    f"{', '.join(known)}",
                    param=axis.name,
                )

    @classmethod
    def parse(cls, given: Mapping[str, str]) -> MonitorStrategies:
        """The choices ``given`` (axis -> choice), the defaults elsewhere."""
        unknown = [axis for axis in given if axis not in AXES]
        if unknown:
            raise InvalidRequestError(
                f"unknown strategy axis {unknown[0]!r} for monitor_operative; known axes: "
                f"{', '.join(AXES)}",
                param="strategies",
            )
        return cls(**given)

    def as_json(self) -> dict[str, str]:
        return asdict(self)

    def memory(self) -> MemoryExtraction:
        return MEMORY_EXTRACTIONS[self.memory_extraction]()

    def compression(self) -> ObservationCompression:
        return OBSERVATION_COMPRESSIONS[self.observation_compression]()

    def retrieval(self) -> RetrievalStrategy:
        return RETRIEVAL_STRATEGIES[self.retrieval_strategy]()

    def decomposition(self) -> TaskDecomposition:
        return TASK_DECOMPOSITIONS[self.task_decomposition]()
