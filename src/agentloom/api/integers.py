"""The integers a request carries, bounded by what stores them.

PostgreSQL's ``integer`` (SQLAlchemy's ``sa.Integer``) holds 32 bits, its ``bigint`` and
SQLite's ``INTEGER`` 64. A request integer past its column's range reached the database and
failed there, a 500 (asyncpg: "value out of int32 range"; sqlite3: ``OverflowError``); one past
a double's range failed on its way to a column of seconds. So every integer a request carries
(body or query) is declared with bounds: :data:`Int32` when a 32-bit column stores it or is
searched by it, :data:`Int64` at most, tighter where the value says so (a page size, a byte).
Out of range is OpenAI's 400 naming the field.

``tests/server/test_integer_bounds.py`` holds this: every integer of every request in the
OpenAPI document has both bounds within 64 bits, and every integer column of the schema names
the request values it takes, each within the column's range.
"""

from __future__ import annotations

from typing import Annotated, Final, TypeAlias

from pydantic import Field

INT32_MAX: Final = 2**31 - 1  # sa.Integer: PostgreSQL's integer
INT64_MAX: Final = 2**63 - 1  # sa.BigInteger: PostgreSQL's bigint; SQLite's INTEGER

Int32: TypeAlias = Annotated[int, Field(ge=-INT32_MAX - 1, le=INT32_MAX)]
"""An integer a 32-bit column holds (``Field(ge=0)`` beside it narrows it further)."""

Int64: TypeAlias = Annotated[int, Field(ge=-INT64_MAX - 1, le=INT64_MAX)]
"""An integer a 64-bit column holds: the widest a request carries."""

StrictInt32: TypeAlias = Annotated[Int32, Field(strict=True)]
"""An :data:`Int32` given as a JSON integer only (not ``"2"``, not ``2.0``)."""

StrictInt64: TypeAlias = Annotated[Int64, Field(strict=True)]
"""An :data:`Int64` given as a JSON integer only (a file attribute's number stays an integer)."""

Byte: TypeAlias = Annotated[int, Field(ge=0, le=255)]
"""One byte of a token's UTF-8 (``logprobs[].bytes``)."""
