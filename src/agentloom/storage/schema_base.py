"""What every module of the schema shares: the metadata the tables are declared in, the key type
of ``seq`` columns, and the owning project's column."""

from __future__ import annotations

import sqlalchemy as sa

# An integer key that autoincrements on SQLite (INTEGER PRIMARY KEY) and PostgreSQL (BIGSERIAL).
SeqKey = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

metadata = sa.MetaData()


def project_column() -> sa.Column[str]:
    """The owning project (see :data:`agentloom.storage.schema.OWNED`); rows from before projects
    are the default's."""
    return sa.Column("project_id", sa.String(96), nullable=False, server_default="proj_default")


def owner_column() -> sa.Column[str]:
    """Who created the row's object: the id of the user or service account behind the key
    (``agentloom.storage.access``); null: nobody's (made before 0025, or without keys)."""
    return sa.Column("owner", sa.String(96), nullable=True)
