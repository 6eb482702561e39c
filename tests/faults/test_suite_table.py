"""The fault suite's table (the docstring of ``tests/faults/__init__.py``) names tests that
exist, and names every test of the suite."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import tests.faults

ROOT = Path(__file__).resolve().parents[2]
FILE = re.compile(r"^ {4}(tests/[\w/]+\.py)$")
TEST = re.compile(r"^ {6}(test_\w+)$")


def _named() -> set[str]:
    """``path::test`` for each test the table names (a file's line, then its tests')."""
    named: set[str] = set()
    path = ""
    for line in (tests.faults.__doc__ or "").splitlines():
        if found := FILE.match(line):
            path = found.group(1)
        elif found := TEST.match(line):
            named.add(f"{path}::{found.group(1)}")
    return named


def _tests_in(path: Path) -> set[str]:
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
    tree = ast.parse(path.read_text())
    return {node.name for node in tree.body if isinstance(node, kinds)}


def test_every_test_the_table_names_exists() -> None:
    named = _named()
    assert len(named) >= 30
    missing = [
        entry
        for entry in sorted(named)
        if entry.split("::")[1] not in _tests_in(ROOT / entry.split("::")[0])
    ]
    assert missing == []


def test_every_test_of_the_suite_is_in_the_table() -> None:
    here = Path(__file__).parent
    ours = {
        f"tests/faults/{path.name}::{name}"
        for path in here.glob("test_*.py")
        if path.name != Path(__file__).name
        for name in _tests_in(path)
        if name.startswith("test_")
    }
    assert ours - _named() == set()
