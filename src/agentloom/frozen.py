"""Frozen records: the project's immutable data classes, kept immutable by the type checker.

``@frozen`` is ``@dataclass(frozen=True, slots=True)`` as ``mypy --strict`` sees it (a field
assigned after construction is an error, ``make test`` fails on it), with the equality, hash,
``repr`` and slots of one; at run time the class is a plain slotted dataclass.

Why not ``frozen=True`` itself: its guard is paid at construction, not at the mistake it
catches. A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``, some
1,560 instructions a field on CPython 3.11 against 300 for a plain slot store (callgrind, 20,000
records of ten fields); a stored response builds some 40 records, 146 fields, which was 8% of
its instructions. The checker refuses the same assignments before they run.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, TypeVar, dataclass_transform

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_T = TypeVar("_T")


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def frozen(cls: type[_T], /) -> type[_T]:
    """``cls`` as a slotted dataclass, frozen for the type checker, hashed by its fields."""
    return dataclass(slots=True, unsafe_hash=True)(cls)


def field_names(cls: type[DataclassInstance]) -> tuple[str, ...]:
    """The names of ``cls``'s fields, in order (a row's columns, say)."""
    return tuple(each.name for each in fields(cls))
