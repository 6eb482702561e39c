"""The slow groups of the suite: real processes, browsers, Node clients, wheels, fuzzing.

Each is bounded by its own budget (the fuzzers' examples, the soak's exchanges, each process's
start and stop deadlines) and every test by ``timeout`` in ``pyproject.toml``. They are marked
``slow`` (``pytest -m "not slow"`` is the quick loop: about a minute on two cores) and run first,
so that under xdist the long ones start while the short ones are still queued behind them
instead of ending the run on one worker.
"""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).parent.parent
SLOW_DIRECTORIES = ("console", "clients", "deploy", "e2e", "faults")
SLOW_FILES = ("test_examples.py", "server/test_openapi_fuzz.py")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow: a real process, browser, client or fuzzer (tests/plugins/groups.py)"
    )


def is_slow(path: Path) -> bool:
    where = path.relative_to(TESTS)
    return where.parts[0] in SLOW_DIRECTORIES or where.as_posix() in SLOW_FILES


@pytest.hookimpl(tryfirst=True)  # before -m deselects by the mark
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    slow = {id(item) for item in items if is_slow(item.path)}
    for item in items:
        if id(item) in slow:
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: id(item) not in slow)  # stable: files keep their order
