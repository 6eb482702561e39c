"""The gateway's ledger: the request log and spend limits, alerts and totals (part of
:mod:`agentloom.storage.schema`, which names every table)."""

from __future__ import annotations

import sqlalchemy as sa

from agentloom.storage.schema_base import SeqKey, metadata

# One row a request of the traffic (responses, chat completions, completions, embeddings,
# moderations, managed-agent messages, a batch's requests), written in batches beside the
# usage; ``id``: the request's ``x-request-id`` (a batch's: its output line's ``request_id``);
# ``cost`` in nano-dollars; swept by ``[retention] request_log``.
request_log = sa.Table(
    "request_log",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(128), nullable=False),
    sa.Column("project_id", sa.String(96), nullable=False),
    sa.Column("key_id", sa.String(128), nullable=True),
    sa.Column("user", sa.String(256), nullable=True),
    sa.Column("endpoint", sa.String(64), nullable=False),
    sa.Column("model", sa.String(256), nullable=True),
    sa.Column("deployment", sa.String(256), nullable=True),
    sa.Column("input_tokens", sa.BigInteger, nullable=False),
    sa.Column("cached_tokens", sa.BigInteger, nullable=False),
    sa.Column("output_tokens", sa.BigInteger, nullable=False),
    sa.Column("cost", sa.BigInteger, nullable=False),
    sa.Column("latency_ms", sa.Float, nullable=False),
    sa.Column("first_token_ms", sa.Float, nullable=True),
    sa.Column("status", sa.Integer, nullable=False),
    sa.Column("error_code", sa.String(128), nullable=True),
    sa.Column("response_id", sa.String(128), nullable=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("batch_id", sa.String(96), nullable=True),  # a request of a batch: the batch
    sa.Index("request_log_id", "id"),
    sa.Index("request_log_created", "created_at"),
    sa.Index("request_log_project", "project_id", "seq"),
)

# Spend: hard limits and alerts (OpenAI's ``spend_limit`` and ``spend_alerts``), each of the
# organization (``scope`` "organization") or of a project (``scope``: its id), in cents a
# calendar month (UTC); and what each project spent a month, in nano-dollars (every process
# adds what it recorded when it writes its usage). ``fired_period``: the month an alert was
# last sent for (at most once a month, whichever process sees it first).
spend_limits = sa.Table(
    "spend_limits",
    metadata,
    sa.Column("scope", sa.String(96), primary_key=True),
    sa.Column("threshold_amount", sa.BigInteger, nullable=False),
    sa.Column("currency", sa.String(8), nullable=False),
    sa.Column("interval", sa.String(16), nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
)
spend_alerts = sa.Table(
    "spend_alerts",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    sa.Column("scope", sa.String(96), nullable=False),
    sa.Column("threshold_amount", sa.BigInteger, nullable=False),
    sa.Column("currency", sa.String(8), nullable=False),
    sa.Column("interval", sa.String(16), nullable=False),
    sa.Column("channel", sa.Text, nullable=False),  # the notification channel, JSON
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("fired_period", sa.BigInteger, nullable=True),
    sa.Index("spend_alerts_scope", "scope", "seq"),
)
spend_totals = sa.Table(
    "spend_totals",
    metadata,
    sa.Column("project_id", sa.String(96), primary_key=True),
    sa.Column("period", sa.BigInteger, primary_key=True),  # the month's start, unix seconds
    sa.Column("amount", sa.BigInteger, nullable=False),
)
