"""Keyset pagination: the one query every list endpoint's page comes from.

A page is the rows of ``query`` ordered by an increasing ``key`` column (a sequence number or a
position), strictly past ``after`` and short of ``before`` (both key values, resolved from the
ids a client gave by the caller), at most ``limit`` of them, and whether more follow. ``before``
alone pages backwards: the ``limit`` rows nearest to it, still returned in ``order``. This is the
place where a filter every list shares (a project, say) belongs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.storage.base import Order, Page

T = TypeVar("T")


def keyset_page(
    conn: Connection,
    query: sa.Select[Any],
    key: sa.ColumnElement[int],
    *,
    order: Order,
    limit: int,
    row: Callable[[Any], T],
    after: int | None = None,
    before: int | None = None,
) -> Page[T]:
    descending = order == "desc"
    if after is not None:
        query = query.where(key < after if descending else key > after)
    if before is not None:
        query = query.where(key > before if descending else key < before)
    backwards = before is not None and after is None
    ordering = key.desc() if descending != backwards else key.asc()
    rows = conn.execute(query.order_by(ordering).limit(limit + 1)).all()
    data = [row(r) for r in rows[:limit]]
    if backwards:
        data.reverse()
    return Page(data=data, has_more=len(rows) > limit)
