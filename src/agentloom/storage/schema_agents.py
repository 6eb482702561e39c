"""The managed agents' tables (part of :mod:`agentloom.storage.schema`, which names every
table)."""

from __future__ import annotations

import sqlalchemy as sa

from agentloom.storage.schema_base import SeqKey, metadata, project_column

_project = project_column

# --- managed agents ------------------------------------------------------------------------
# Agents that live on the server (``/v1/managed-agents``): their configuration (a JSON object),
# their schedule (a row of ``schedules``), and what they have used so far. Their sessions and
# ticks (the operatives') are ``agent_sessions`` / ``agent_ticks`` rows under the agent's id.
managed_agents = sa.Table(
    "managed_agents",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    _project(),
    sa.Column("name", sa.String(256), nullable=False),
    sa.Column("agent_type", sa.String(64), nullable=False),
    sa.Column("config", sa.Text, nullable=False),  # a JSON object
    sa.Column("status", sa.String(32), nullable=False),  # idle, running, error
    sa.Column("template_id", sa.String(96), nullable=True),
    sa.Column("schedule_id", sa.String(96), nullable=True),
    sa.Column("summary_memory", sa.Text, nullable=False, server_default=""),
    sa.Column("total_runs", sa.Integer, nullable=False, server_default="0"),
    sa.Column("input_tokens", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("output_tokens", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("last_run_at", sa.Float, nullable=True),
    sa.Column("last_activity_at", sa.Float, nullable=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.Index("ix_managed_agents_project", "project_id", "seq"),
)

# What was said to an agent and what it answered: ``direction`` user_to_agent (``status``
# pending until a run or a stream takes it, then delivered) or agent_to_user (delivered, or
# incomplete when its turn was cut short); ``tool_calls`` a JSON list of what its tools did.
managed_agent_messages = sa.Table(
    "managed_agent_messages",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    _project(),
    sa.Column("agent_id", sa.String(96), nullable=False),
    sa.Column("direction", sa.String(16), nullable=False),
    sa.Column("content", sa.Text, nullable=False),
    sa.Column("mode", sa.String(16), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("run_id", sa.String(96), nullable=True),
    sa.Column("tool_calls", sa.Text, nullable=True),
    sa.Column("stop_reason", sa.String(32), nullable=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Index("ix_managed_agent_messages_agent", "agent_id", "seq"),
)

# One run of an agent over its queued messages (or a tick of its schedule), run as a durable
# job; its stream's frames are ``response_events`` rows under the run's id.
managed_agent_runs = sa.Table(
    "managed_agent_runs",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    _project(),
    sa.Column("agent_id", sa.String(96), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("trigger", sa.String(16), nullable=False),  # manual, message, schedule
    sa.Column("error", sa.Text, nullable=True),  # a JSON object: code, message
    sa.Column("reply_id", sa.String(96), nullable=True),
    sa.Column("input_tokens", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("output_tokens", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("started_at", sa.Float, nullable=True),
    sa.Column("ended_at", sa.Float, nullable=True),
    sa.Index("ix_managed_agent_runs_agent", "agent_id", "seq"),
)

# An agent's task list (OpenJarvis's): what to do, how far it got, what it found.
managed_agent_tasks = sa.Table(
    "managed_agent_tasks",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    _project(),
    sa.Column("agent_id", sa.String(96), nullable=False),
    sa.Column("description", sa.Text, nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("progress", sa.Text, nullable=False, server_default="{}"),
    sa.Column("findings", sa.Text, nullable=False, server_default="[]"),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.Index("ix_managed_agent_tasks_agent", "agent_id", "seq"),
)
