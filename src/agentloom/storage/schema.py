"""The tables, as SQLAlchemy Core metadata. Migrations create them; queries use these objects."""

from __future__ import annotations

import sqlalchemy as sa

# An integer key that autoincrements on SQLite (INTEGER PRIMARY KEY) and PostgreSQL (BIGSERIAL).
SeqKey = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

metadata = sa.MetaData()

responses = sa.Table(
    "responses",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("model", sa.String(256), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("previous_response_id", sa.String(96), nullable=True),
    sa.Column("instance_id", sa.String(96), nullable=True),
    sa.Column("body", sa.Text, nullable=False),
    sa.Index("ix_responses_model_seq", "model", "seq"),
    sa.Index("ix_responses_status", "status"),
)

# Items are stored once, under the response that introduced them: kind 0 = its new input,
# kind 1 = its output, ``position`` = the order within that kind.
items = sa.Table(
    "items",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False),
    sa.Column(
        "response_id",
        sa.String(96),
        sa.ForeignKey("responses.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("kind", sa.SmallInteger, nullable=False),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Index("ix_items_response", "response_id", "kind", "position"),
    sa.Index("ix_items_id", "id"),
)

# Server processes sharing the database: a response ``in_progress`` whose instance stopped
# beating is failed by any live instance.
instances = sa.Table(
    "instances",
    metadata,
    sa.Column("id", sa.String(96), primary_key=True),
    sa.Column("heartbeat_at", sa.Float, nullable=False),
    sa.Column("host", sa.String(255), nullable=True),
    sa.Column("pid", sa.Integer, nullable=True),
)

INPUT = 0
OUTPUT = 1

# Conversations: an ordered list of items of their own. ``version`` grows with every change of
# the items (a cached history is valid while the version is unchanged); ``lock_*`` names the
# response running on the conversation (one at a time) and the server instance running it.
conversations = sa.Table(
    "conversations",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("metadata", sa.Text, nullable=False),
    sa.Column("version", sa.Integer, nullable=False, server_default="0"),
    sa.Column("lock_response_id", sa.String(96), nullable=True),
    sa.Column("lock_instance_id", sa.String(96), nullable=True),
    sa.Column("lock_at", sa.Float, nullable=True),
)

# A conversation's items in order (``seq``). An item id belongs to one conversation only.
conversation_items = sa.Table(
    "conversation_items",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    sa.Column(
        "conversation_id",
        sa.String(96),
        sa.ForeignKey("conversations.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("response_id", sa.String(96), nullable=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Index("ix_conversation_items_conversation_seq", "conversation_id", "seq"),
)

# Reusable prompts: every version of a prompt is a row; one version per prompt is the default.
prompts = sa.Table(
    "prompts",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("is_default", sa.Boolean, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.UniqueConstraint("id", "version", name="uq_prompts_id_version"),
)

# Keys that seal opaque content handed to clients (compaction items, encrypted reasoning):
# shared by every server process through the database; the newest seals, all of them open.
sealing_keys = sa.Table(
    "sealing_keys",
    metadata,
    sa.Column("kid", sa.String(32), primary_key=True),
    sa.Column("key", sa.String(128), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
)
