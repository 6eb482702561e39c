"""``@frozen`` records: a dataclass's equality, hash and slots; every record of the package
declared with it."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

from agentloom.frozen import field_names, frozen

SRC = Path(__file__).resolve().parents[1] / "src"


@frozen
class _Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = dataclasses.field(default=(), compare=False)


def test_a_record_compares_and_hashes_by_its_fields() -> None:
    assert _Point(1, 2) == _Point(1, 2, ("other",))
    assert {_Point(1, 2): "a"}[_Point(1, 2)] == "a"
    assert _Point(1) != _Point(2)
    assert dataclasses.replace(_Point(1, 2), y=3) == _Point(1, 3)
    assert field_names(_Point) == ("x", "y", "tags")


def test_a_record_has_slots() -> None:
    assert _Point.__slots__ == ("x", "y", "tags")
    assert not hasattr(_Point(1), "__dict__")


def _frozen_dataclasses(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.ClassDef):
            continue
        for decorator in node.decorator_list:
            if isinstance(decorator, ast.Call) and any(
                k.arg == "frozen" and isinstance(k.value, ast.Constant) and k.value.value
                for k in decorator.keywords
            ):
                found.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name}")
    return found


def test_records_are_declared_with_frozen() -> None:
    """``dataclass(frozen=True)`` costs an ``object.__setattr__`` a field at construction
    (docs/architecture.md): a record of the package is ``@frozen``."""
    found = [hit for path in sorted(SRC.rglob("*.py")) for hit in _frozen_dataclasses(path)]
    assert found == [], f"use @frozen (agentloom.frozen), not dataclass(frozen=True): {found}"
