"""Which database each test runs on, and the check that keeps the split honest: every SQL
statement the suite runs on SQLite is run by some test that runs on PostgreSQL too.

A test that uses ``database_url`` (through ``settings``, ``app``, ``client`` ...) runs on SQLite,
and on PostgreSQL too when :func:`on_both_databases` says so: it is marked ``both_databases`` (a
module says it with ``pytestmark``), it lives in ``tests/storage``, or it works on the stores
themselves (the ``database`` fixture).

Each SQLite connection opened in the test process reports what it runs (SQLite's trace
callback). A statement's shape is its text with every literal made a ``?`` (SQLite reports it
with the values bound) and every list of them one ``?``. Each shape a test run on SQLite through
``database_url`` runs is filed under it: a test that runs on both databases covers it, one that
runs on SQLite alone needs it covered. (Tests that make SQLite files of their own, to test
SQLite itself or an old schema, are not split, and not counted.)

What the migrations run counts as run on both (:func:`covering`): each session migrates its
PostgreSQL database with them. When the whole suite ran (``pytest`` with no arguments, nothing
deselected, no early stop), a shape only SQLite-only tests ran fails the session, naming the
test that ran it: mark that test (or its module) ``both_databases``, or have a test that runs on
both run the same statement. Under xdist each worker reports its shapes to the controller, which
checks.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.pool import Pool

BACKENDS = ["sqlite", "postgresql"]
_KINDS = ("select", "insert", "update", "delete", "with", "replace")
_LITERAL = re.compile(
    r"""'(?:[^']|'')*'|[xX]'[0-9a-fA-F]*'|(?<![\w"])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b|\bNULL\b"""
)
_LIST = re.compile(r"\?(?:\s*,\s*\?)+")
_SPACE = re.compile(r"\s+")
_OUTPUT = "sql_shapes"


BOTH_MARK = "both_databases"
STORE_SUITES = Path(__file__).parent.parent / "storage"


def on_both_databases(node: pytest.Item | pytest.FunctionDefinition) -> bool:
    """Whether a test that uses a database runs on SQLite and on PostgreSQL."""
    return (
        node.get_closest_marker(BOTH_MARK) is not None
        or node.path.is_relative_to(STORE_SUITES)
        or "database" in getattr(node, "fixturenames", ())
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``database_url`` on both backends or SQLite alone, unless the test chooses its own."""
    if "database_url" not in metafunc.fixturenames:
        return
    chosen = metafunc.definition.iter_markers("parametrize")
    if any("database_url" in str(mark.args[0]) for mark in chosen):
        return
    backends = BACKENDS if on_both_databases(metafunc.definition) else BACKENDS[:1]
    metafunc.parametrize("database_url", backends, indirect=True)


def shape(sql: str) -> str | None:
    """The statement with its literals as ``?``; ``None`` for what is not a query or a write."""
    text = _SPACE.sub(" ", sql).strip()
    if not text.lower().startswith(_KINDS):
        return None
    return _LIST.sub("?", _LITERAL.sub("?", text))


class Shapes:
    """The statement shapes seen: those a test on both databases ran, and the others with the
    first SQLite-only test that ran each."""

    def __init__(self) -> None:
        self.covered: set[str] = set()
        self.uncovered: dict[str, str] = {}
        self.test: str | None = None  # the running test, when it runs on SQLite alone
        self.both = False

    def seen(self, sql: str) -> None:
        found = shape(sql)
        if found is None:
            return
        if self.both:
            self.covered.add(found)
        elif self.test is not None:
            self.uncovered.setdefault(found, self.test)

    def merge(self, other: dict[str, Any]) -> None:
        self.covered.update(other["covered"])
        for found, test in other["uncovered"].items():
            self.uncovered.setdefault(found, test)

    def dump(self) -> str:
        return json.dumps({"covered": sorted(self.covered), "uncovered": self.uncovered})

    def missing(self) -> dict[str, str]:
        return {s: t for s, t in sorted(self.uncovered.items()) if s not in self.covered}


_shapes = Shapes()


LISTENERS: list[Callable[[str], None]] = []  # told of every statement too (test_scoping.py)


def _seen(sql: str) -> None:
    _shapes.seen(sql)
    for listener in LISTENERS:
        listener(sql)


def _trace(dbapi_connection: object, _record: object) -> None:
    if isinstance(dbapi_connection, sqlite3.Connection):
        dbapi_connection.set_trace_callback(_seen)


@contextmanager
def covering(what: str) -> Iterator[None]:
    """What runs inside counts as run on both databases."""
    before = _shapes.test, _shapes.both
    _shapes.test, _shapes.both = what, True
    try:
        yield
    finally:
        _shapes.test, _shapes.both = before


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{BOTH_MARK}: what the test checks depends on the storage: run it on SQLite "
        "and on PostgreSQL",
    )
    event.listen(Pool, "connect", _trace)
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_Controller(), "split_controller")


def pytest_unconfigure(config: pytest.Config) -> None:
    event.remove(Pool, "connect", _trace)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    params = getattr(item, "callspec", None)
    on_sqlite = params is not None and params.params.get("database_url") == "sqlite"
    _shapes.test = item.nodeid if on_sqlite else None  # others are not split: not counted
    _shapes.both = on_sqlite and on_both_databases(item)
    try:
        return (yield)
    finally:
        _shapes.test, _shapes.both = None, False


class _Controller:
    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        found = getattr(node, "workeroutput", {}).get(_OUTPUT)
        if found is not None:
            _shapes.merge(json.loads(found))


def _whole_suite(session: pytest.Session) -> bool:
    option = session.config.option
    return (
        session.config.args_source is pytest.Config.ArgsSource.TESTPATHS
        and not option.keyword
        and not option.markexpr
        and not option.deselect
        and not getattr(option, "lf", False)
        and not session.shouldfail
        and not session.shouldstop
    )


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    output = getattr(session.config, "workeroutput", None)
    if output is not None:  # an xdist worker: the controller checks
        output[_OUTPUT] = _shapes.dump()
        return
    if not _whole_suite(session):
        return
    missing = _shapes.missing()
    if missing:
        lines = [f"  {sql}\n    run by {test}" for sql, test in missing.items()]
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_sep("=", "SQL run on SQLite alone", red=True)
            reporter.write_line(
                f"{len(missing)} statements ran on SQLite only: mark a test that runs each "
                "both_databases (tests/plugins/split.py)\n" + "\n".join(lines)
            )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
