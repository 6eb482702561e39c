"""Counters, gauges and histograms kept as plain numbers, read by a Prometheus collector when
``/metrics`` is scraped.

``prometheus_client``'s own metrics take a lock for every increment and check their state on
every call: a stored response made 17 locked increments and about 60 calls for its metrics, 6%
of its CPU (measured: metrics on against off). A value here is one attribute added to; a
family finds its child by label values in a dict, once per combination. The exposition is
``prometheus_client``'s (its families and ``generate_latest``): the same series, ``_total``,
``_bucket``, ``_sum``, ``_count`` and ``_created`` included.

The values are updated on the event loop's thread, where every caller runs; they take no lock.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from prometheus_client import CollectorRegistry
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.samples import Sample

__all__ = [
    "Counter",
    "CounterValue",
    "Family",
    "Gauge",
    "GaugeValue",
    "Histogram",
    "HistogramValue",
    "Registry",
]


class CounterValue:
    __slots__ = ("created", "value")

    def __init__(self) -> None:
        self.value = 0.0
        self.created = time.time()

    def inc(self, amount: float = 1.0) -> None:
        self.value += amount

    def dump(self) -> list[float]:
        return [self.value, self.created]

    def absorb(self, dumped: list[Any]) -> None:
        """Add another process's count (its dump) to this one."""
        self.value += float(dumped[0])
        self.created = min(self.created, float(dumped[1]))

    def expose(self, family: Metric, labels: tuple[str, ...]) -> None:
        assert isinstance(family, CounterMetricFamily)
        family.add_metric(labels, self.value, created=self.created)


class GaugeValue:
    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def inc(self, amount: float = 1.0) -> None:
        self.value += amount

    def dec(self, amount: float = 1.0) -> None:
        self.value -= amount

    def set(self, value: float) -> None:
        self.value = value

    def dump(self) -> list[float]:
        return [self.value]

    def absorb(self, dumped: list[Any]) -> None:
        self.value += float(dumped[0])

    def expose(self, family: Metric, labels: tuple[str, ...]) -> None:
        assert isinstance(family, GaugeMetricFamily)
        family.add_metric(labels, self.value)


class HistogramValue:
    """Counts per bucket (not cumulative: the exposition adds them up), their sum."""

    __slots__ = ("_bounds", "counts", "created", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self._bounds = bounds  # upper bounds, ascending, +Inf last
        self.counts = [0] * len(bounds)
        self.sum = 0.0
        self.created = time.time()

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self._bounds, value)] += 1  # the first bucket with value <= le
        self.sum += value

    def dump(self) -> list[Any]:
        return [self.counts, self.sum, self.created]

    def absorb(self, dumped: list[Any]) -> None:
        counts = dumped[0]
        if len(counts) != len(self.counts):
            return  # another release's buckets: not comparable
        self.counts = [mine + int(theirs) for mine, theirs in zip(self.counts, counts, strict=True)]
        self.sum += float(dumped[1])
        self.created = min(self.created, float(dumped[2]))

    def expose(self, family: Metric, labels: tuple[str, ...]) -> None:
        """Cumulative buckets, the count, the sum, and the creation time."""
        assert isinstance(family, HistogramMetricFamily)
        buckets, seen = [], 0
        for bound, count in zip(self._bounds, self.counts, strict=True):
            seen += count
            buckets.append((_le(bound), float(seen)))
        family.add_metric(list(labels), buckets, self.sum)
        named = family.samples[-1].labels  # the _sum sample's: these labels by name
        family.samples.append(Sample(f"{family.name}_created", named, self.created))


V = TypeVar("V", CounterValue, GaugeValue, HistogramValue)


class _Family(ABC, Generic[V]):
    """A metric's values by label values; registered in ``registry`` as its collector."""

    family_type: ClassVar[Callable[..., Metric]]  # its samples' family in the exposition

    def __init__(
        self,
        name: str,
        documentation: str,
        labelnames: Sequence[str] = (),
        *,
        registry: CollectorRegistry,
        shared: bool = False,
    ) -> None:
        """``shared``: every process holds the same value (read from the database): across
        processes it is taken once, not added up."""
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        self.shared = shared
        self._values: dict[tuple[str, ...], V] = {}
        registry.register(self)

    def labels(self, *values: str) -> V:
        found = self._values.get(values)
        if found is None:
            if len(values) != len(self.labelnames):
                raise ValueError(f"{self.name} has labels {self.labelnames}, given {values}")
            found = self._values[values] = self._new()
        return found

    def clear(self) -> None:
        self._values.clear()

    @abstractmethod
    def _new(self) -> V:
        """A new value of this kind (each family makes its own)."""

    def _family(self) -> Metric:
        return self.family_type(self.name, self.documentation, labels=self.labelnames)

    def describe(self) -> list[Metric]:
        """The family's names, without samples: the registry refuses a name taken twice."""
        return [self._family()]

    def collect(self) -> Iterator[Metric]:
        family = self._family()
        for labels, value in list(self._values.items()):
            value.expose(family, labels)
        yield family

    def dump(self) -> list[list[Any]]:
        """The values as JSON: ``[labels, value's dump]`` each (for other processes)."""
        return [[list(labels), value.dump()] for labels, value in list(self._values.items())]

    def merged(self, others: Sequence[list[list[Any]]]) -> Metric:
        """This family with other processes' dumps of it added in."""
        values: dict[tuple[str, ...], V] = {}
        for dump in (self.dump(), *([] if self.shared else others)):
            for labels, dumped in dump:
                key = tuple(str(label) for label in labels)
                if len(key) != len(self.labelnames):
                    continue  # another release's labels
                value = values.get(key)
                if value is None:
                    value = values[key] = self._new()  # zero, created now: absorbing sets both
                value.absorb(dumped)
        family = self._family()
        for labels, value in values.items():
            value.expose(family, labels)
        return family


class Counter(_Family[CounterValue]):
    family_type = CounterMetricFamily

    def _new(self) -> CounterValue:
        return CounterValue()


class Gauge(_Family[GaugeValue]):
    family_type = GaugeMetricFamily

    def _new(self) -> GaugeValue:
        return GaugeValue()


class Histogram(_Family[HistogramValue]):
    family_type = HistogramMetricFamily

    def __init__(
        self,
        name: str,
        documentation: str,
        labelnames: Sequence[str] = (),
        *,
        registry: CollectorRegistry,
        buckets: Sequence[float],
    ) -> None:
        finite = sorted(float(b) for b in buckets if b != float("inf"))  # +Inf is added once
        self._bounds = (*finite, float("inf"))
        super().__init__(name, documentation, labelnames, registry=registry)

    def _new(self) -> HistogramValue:
        return HistogramValue(self._bounds)


Family = _Family[Any]


class Registry(CollectorRegistry):
    """prometheus_client's registry, which also keeps the families registered in it (to
    publish their values to other processes: :mod:`agentloom.metrics_shared`)."""

    def __init__(self) -> None:
        super().__init__()
        self.families: list[Family] = []

    def register(self, collector: Any) -> None:
        super().register(collector)
        if isinstance(collector, _Family):
            self.families.append(collector)


def _le(bound: float) -> str:
    """A bucket's ``le`` label as Prometheus writes it: ``0.005``, ``1.0``, ``+Inf``."""
    return "+Inf" if bound == float("inf") else repr(bound)
