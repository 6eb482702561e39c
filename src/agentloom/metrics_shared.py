"""Metrics across the worker processes of one server (``agentloom serve --workers N``).

The workers share one port, so a scrape reaches one of them at random. Each writes its values
to a directory the server's parent process made for this run (:data:`DIRECTORY_ENV`), a JSON
file of its own replaced atomically every :data:`PUBLISH_EVERY` seconds and at each scrape it
answers; the answering worker adds the other files in: counters and histograms of every process
that ran in this run (a worker that died and was replaced still counts what it did, so counters
never go back), gauges of the processes still running, and gauges that every process reads from
the database (``shared``) once. The others' values are at most :data:`PUBLISH_EVERY` seconds
old. Prometheus's own multiprocess mode does the same with a file per metric and memory maps;
this keeps the metrics' plain numbers (:mod:`agentloom.metric_kinds`) and writes once a second.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any, Final

import anyio
from prometheus_client import CollectorRegistry, generate_latest

from agentloom.frozen import frozen
from agentloom.metric_kinds import Gauge
from agentloom.metrics import Metrics

__all__ = ["DIRECTORY_ENV", "PUBLISH_EVERY", "SharedMetrics"]

log = logging.getLogger(__name__)

DIRECTORY_ENV: Final = "AGENTLOOM_METRICS_DIRECTORY"  # set by `serve` for its workers
PUBLISH_EVERY: Final = 1.0  # seconds between a worker's writes of its values


@frozen
class _Peer:
    pid: int
    families: dict[str, list[list[Any]]]
    alive: bool


class SharedMetrics:
    """This process's metrics, published for the others and read with theirs."""

    def __init__(self, metrics: Metrics, directory: Path) -> None:
        self._metrics = metrics
        self._directory = directory
        self._pid = os.getpid()

    @classmethod
    def from_environment(cls, metrics: Metrics | None) -> SharedMetrics | None:
        """Sharing when the server runs several workers (``serve`` says where), else none."""
        directory = os.environ.get(DIRECTORY_ENV)
        if metrics is None or not directory:
            return None
        return cls(metrics, Path(directory))

    def publish(self) -> None:
        """Write this process's values (replacing its file whole: a reader never sees half)."""
        families = {f.name: f.dump() for f in self._metrics.families()}
        body = json.dumps({"pid": self._pid, "families": families}, separators=(",", ":"))
        target = self._directory / f"{self._pid}.json"
        staged = target.with_suffix(".tmp")
        try:
            staged.write_text(body)
            os.replace(staged, target)
        except OSError as exc:  # the run's directory is gone (the server is stopping)
            log.debug("could not publish this worker's metrics: %s", exc)

    async def run(self) -> None:
        """Publish every :data:`PUBLISH_EVERY` seconds, for the process's life."""
        while True:
            await anyio.to_thread.run_sync(self.publish)
            await anyio.sleep(PUBLISH_EVERY)

    def exposition(self) -> bytes:
        """Every process's metrics as one exposition (this one's fresh)."""
        self.publish()
        peers = [peer for peer in self._peers() if peer.pid != self._pid]
        registry = CollectorRegistry(auto_describe=False)
        for family in self._metrics.families():
            live_only = isinstance(family, Gauge)  # a dead process's gauges held no more
            dumps = [p.families.get(family.name, []) for p in peers if p.alive or not live_only]
            registry.register(_Fixed(family.merged(dumps)))
        return generate_latest(registry)

    def _peers(self) -> list[_Peer]:
        found = []
        for path in self._directory.glob("*.json"):
            try:
                body = json.loads(path.read_text())
                pid = int(body["pid"])
                found.append(_Peer(pid, dict(body["families"]), _alive(pid)))
            except (OSError, ValueError, KeyError, TypeError):
                log.debug("skipped an unreadable metrics file %s", path, exc_info=True)
        return found


class _Fixed:
    """A collector of one family built already."""

    def __init__(self, family: Any) -> None:
        self._family = family

    def collect(self) -> list[Any]:
        return [self._family]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process with that pid: not ours, but it runs
    return True
