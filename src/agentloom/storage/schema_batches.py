"""The Batch API's tables (part of :mod:`agentloom.storage.schema`, which names every table)."""

from __future__ import annotations

import sqlalchemy as sa

from agentloom.storage.schema_base import SeqKey, metadata, project_column

_project = project_column

# --- the Batch API -------------------------------------------------------------------------
# A batch of requests to one endpoint, read from an input file (``/v1/batches``), run as a job;
# its counts and token usage grow as its requests end (each in the transaction that records the
# request's result), its output and error files are written when it ends.
batches = sa.Table(
    "batches",
    metadata,
    _project(),
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("endpoint", sa.String(64), nullable=False),
    sa.Column("input_file_id", sa.String(128), nullable=False),
    sa.Column("completion_window", sa.String(16), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("metadata", sa.Text, nullable=True),  # JSON object of strings
    sa.Column("output_expires_after", sa.Integer, nullable=True),  # seconds, for its files
    sa.Column("model", sa.String(256), nullable=True),  # its requests' model (the first line's)
    sa.Column("errors", sa.Text, nullable=True),  # JSON list: why its input file was refused
    sa.Column("output_file_id", sa.String(128), nullable=True),
    sa.Column("error_file_id", sa.String(128), nullable=True),
    sa.Column("expires_at", sa.Float, nullable=False),
    sa.Column("in_progress_at", sa.Float, nullable=True),
    sa.Column("finalizing_at", sa.Float, nullable=True),
    sa.Column("completed_at", sa.Float, nullable=True),
    sa.Column("failed_at", sa.Float, nullable=True),
    sa.Column("expired_at", sa.Float, nullable=True),
    sa.Column("cancelling_at", sa.Float, nullable=True),
    sa.Column("cancelled_at", sa.Float, nullable=True),
    sa.Column("total", sa.Integer, nullable=False, server_default="0"),
    sa.Column("completed", sa.Integer, nullable=False, server_default="0"),
    sa.Column("failed", sa.Integer, nullable=False, server_default="0"),
    sa.Column("input_tokens", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("cached_tokens", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("output_tokens", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("reasoning_tokens", sa.BigInteger, nullable=False, server_default="0"),
    sa.Index("ix_batches_project_seq", "project_id", "seq"),
)

# The result of each request of a batch that ended, by its line in the input file: the line of
# the output file (``failed`` false) or of the error file. Written once: a batch run again
# after its process stopped runs only the lines without a result.
batch_results = sa.Table(
    "batch_results",
    metadata,
    _project(),
    sa.Column("batch_id", sa.String(96), primary_key=True),
    sa.Column("line", sa.Integer, primary_key=True),
    sa.Column("failed", sa.Boolean, nullable=False),
    sa.Column("body", sa.Text, nullable=False),  # the output line, JSON
)
