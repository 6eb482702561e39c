"""``UsageCounts.add`` adds every count (it is spelled out field by field for speed)."""

from __future__ import annotations

from dataclasses import fields

from agentloom.storage.usage import COUNTS, UsageCounts


def test_add_adds_every_count() -> None:
    assert {f.name for f in fields(UsageCounts)} == set(COUNTS)
    total = UsageCounts(**{name: 1 for name in COUNTS})
    total.add(UsageCounts(**{name: i + 2 for i, name in enumerate(COUNTS)}))
    assert {name: getattr(total, name) for name in COUNTS} == {
        name: i + 3 for i, name in enumerate(COUNTS)
    }
