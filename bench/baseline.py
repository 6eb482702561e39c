"""The checked instruction count of a stored response (issue 37).

``make bench`` measures it (:mod:`bench.instructions`: 1000 sequential stored responses under
callgrind, the server's duties taken off) and fails, after writing its results, when a count is
more than :data:`TOLERANCE` above the baseline of its database here: a regression shows as a
failed row and a non-zero exit, not as a number nobody compares.

Moving a baseline: a change that legitimately costs more (or saves) measures the row alone with
``python -m bench.baseline`` (both databases, about two minutes each), and writes the new count
here with the date and what changed, in the same commit as the change that moved it.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass

TOLERANCE = 0.02  # above the baseline by more than this fails


@dataclass(frozen=True, slots=True)
class Baseline:
    instructions: int  # a stored response, as bench.instructions counts it
    measured: str  # when, and on what
    why: str  # what set it

    @property
    def limit(self) -> float:
        return self.instructions * (1 + TOLERANCE)

    def verdict(self, counted: float) -> str | None:
        """Why ``counted`` fails the baseline (``None``: it passes)."""
        if counted <= self.limit:
            return None
        over = counted / self.instructions - 1
        return (
            f"{counted / 1e6:.3f} million instructions a stored response is {over:.1%} above the"
            f" baseline of {self.instructions / 1e6:.3f} million ({self.measured}; tolerance"
            f" {TOLERANCE:.0%}): find the cost (callgrind_annotate, a Python profile), or move"
            " the baseline in bench/baseline.py with the change that legitimately costs it"
        )


BASELINES: dict[str, Baseline] = {
    "sqlite": Baseline(
        1_963_000,
        "2026-12-02 (later), 2-core AMD EPYC, CPython 3.11.7, SQLite (the writer on the event"
        " loop), the counted server's PYTHONHASHSEED fixed",
        "2.695 M with issues 40 and 41 merged, then 2.280 M: a collected reply makes no events"
        " no one sees, the blocks every request enters are objects, one plan for requests"
        " without tools, one timer per wait of the backend call; 2.298 M with the access rules"
        " merged, then -7%: a stored response's JSON encoded once for its row and its reply"
        " (-0.050 M), the history cache makes a response's stored items only when a request"
        " continues it (-0.033 M), the final write shielded only where an anyio scope could"
        " cancel it (-0.036 M), routes without Starlette's per-route wrapper (-0.012 M), the"
        " on-loop SQLite batch committed by the driver (-0.013 M); 2.166 M, then -10% with"
        " records made without frozen dataclasses' object.__setattr__ a field (agentloom.frozen);"
        " 1.946 M was a low draw of a random string hash: six runs of the same code counted"
        " 1.958-1.990 M; with the hash seed fixed, 1.959-1.966 M over six runs",
    ),
    "postgresql": Baseline(
        1_895_000,
        "2026-12-02 (later), 2-core AMD EPYC, CPython 3.11.7, PostgreSQL on 127.0.0.1 (asyncpg),"
        " the counted server's PYTHONHASHSEED fixed",
        "2.706 M with issues 40 and 41 merged, 2.281 M with SQLite's changes, 2.288 M with the"
        " access rules merged, then -5% with SQLite's changes but its driver commit; 2.181 M,"
        " then -8% with records made without frozen dataclasses' object.__setattr__ a field;"
        " 2.012 M with the hash seed fixed (1.998 M was a low draw), then -5.8% with each SQL"
        " of Runner.execute keeping its pool connection (no checkout and release a statement)",
    ),
}


def dialect(database_url: str) -> str:
    return database_url.split(":", 1)[0].split("+", 1)[0]


def baseline_of(database_url: str) -> Baseline:
    return BASELINES[dialect(database_url)]


def main() -> None:
    """Measure the instruction row on each database and check it against its baseline."""
    from bench import postgres, run  # the servers, only when measuring

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    failed = False
    with run.scratch_sqlite() as sqlite:
        failed |= _checked(run.measure_instructions(sqlite), sqlite)
    pg_admin = os.environ.get("AGENTLOOM_BENCH_POSTGRES_URL", postgres.DEFAULT)
    if not args.no_postgres and postgres.reachable(pg_admin):
        with postgres.scratch(pg_admin) as pg:
            failed |= _checked(run.measure_instructions(pg), pg)
    sys.exit(1 if failed else 0)


def _checked(counted: float | None, database_url: str) -> bool:
    if counted is None:
        print("valgrind not installed: not measured")
        return False
    base = baseline_of(database_url)
    verdict = base.verdict(counted)
    shown = f"{counted / 1e6:.3f} million (baseline {base.instructions / 1e6:.3f})"
    print(f"{dialect(database_url)}: {shown}")
    if verdict is not None:
        print(f"FAIL: {verdict}", file=sys.stderr)
    return verdict is not None


if __name__ == "__main__":
    main()
