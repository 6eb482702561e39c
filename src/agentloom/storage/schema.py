"""The tables, as SQLAlchemy Core metadata. Migrations create them; queries use these objects.

Every table is named here (``schema.users`` ...); the people, the ledger and the Batch API
declare theirs in modules of their own (``schema_people``, ``schema_ledger``,
``schema_batches``), on the same metadata."""

from __future__ import annotations

import sqlalchemy as sa

from agentloom.storage.schema_agents import (
    managed_agent_messages as managed_agent_messages,
)
from agentloom.storage.schema_agents import (
    managed_agent_runs as managed_agent_runs,
)
from agentloom.storage.schema_agents import (
    managed_agent_tasks as managed_agent_tasks,
)
from agentloom.storage.schema_agents import (
    managed_agents as managed_agents,
)
from agentloom.storage.schema_base import SeqKey as SeqKey
from agentloom.storage.schema_base import metadata as metadata
from agentloom.storage.schema_base import owner_column, project_column
from agentloom.storage.schema_batches import (
    batch_results as batch_results,
)
from agentloom.storage.schema_batches import (
    batches as batches,
)
from agentloom.storage.schema_ledger import (
    request_log as request_log,
)
from agentloom.storage.schema_ledger import (
    spend_alerts as spend_alerts,
)
from agentloom.storage.schema_ledger import (
    spend_limits as spend_limits,
)
from agentloom.storage.schema_ledger import (
    spend_totals as spend_totals,
)
from agentloom.storage.schema_people import (
    group_users as group_users,
)
from agentloom.storage.schema_people import (
    groups as groups,
)
from agentloom.storage.schema_people import (
    invites as invites,
)
from agentloom.storage.schema_people import (
    project_members as project_members,
)
from agentloom.storage.schema_people import (
    role_assignments as role_assignments,
)
from agentloom.storage.schema_people import (
    roles as roles,
)
from agentloom.storage.schema_people import (
    users as users,
)

_project = project_column

responses = sa.Table(
    "responses",
    metadata,
    _project(),
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("model", sa.String(256), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("previous_response_id", sa.String(96), nullable=True),
    sa.Column("instance_id", sa.String(96), nullable=True),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("trace", sa.Text, nullable=True),  # its run's timeline (agentloom.timeline)
    sa.Index("ix_responses_model_seq", "model", "seq"),
    sa.Index("ix_responses_status", "status"),
    sa.Index("ix_responses_project_seq", "project_id", "seq"),  # a project's list (migration 0007)
)

# Items are stored once, under the response that introduced them: kind 0 = its new input,
# kind 1 = its output, ``position`` = the order within that kind.
items = sa.Table(
    "items",
    metadata,
    _project(),
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
    _project(),
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("metadata", sa.Text, nullable=False),
    sa.Column("version", sa.Integer, nullable=False, server_default="0"),
    sa.Column("lock_response_id", sa.String(96), nullable=True),
    sa.Column("lock_instance_id", sa.String(96), nullable=True),
    sa.Column("lock_at", sa.Float, nullable=True),
    sa.Index(
        "ix_conversations_project_seq", "project_id", "seq"
    ),  # a project's list (migration 0007)
)

# A conversation's items in order (``seq``). An item id belongs to one conversation only.
conversation_items = sa.Table(
    "conversation_items",
    metadata,
    _project(),
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
    _project(),
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("is_default", sa.Boolean, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.UniqueConstraint("id", "version", name="uq_prompts_id_version"),
    sa.Index("ix_prompts_project_seq", "project_id", "seq"),  # a project's list (migration 0007)
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


# Uploaded files (the Files API): the row describes the file, the bytes live in the blob store
# under ``blob_key``. ``expires_at`` (unix seconds) is null for files that never expire.
files = sa.Table(
    "files",
    metadata,
    _project(),
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("filename", sa.String(512), nullable=False),
    sa.Column("purpose", sa.String(32), nullable=False),
    sa.Column("bytes", sa.BigInteger, nullable=False),
    sa.Column("content_type", sa.String(128), nullable=False),
    sa.Column("sha256", sa.String(64), nullable=False),
    sa.Column("expires_at", sa.Float, nullable=True),
    sa.Column("blob_key", sa.String(255), nullable=False),
    sa.Index("ix_files_purpose_seq", "purpose", "seq"),
    sa.Index("ix_files_expires_at", "expires_at"),
    sa.Index("ix_files_project_seq", "project_id", "seq"),  # a project's list (migration 0007)
)


# Vector stores (the Vector Stores API). A store is embedded by one model (``embedder``,
# ``dimensions``); ``epoch`` grows whenever chunks are deleted, so in-memory indexes know to
# drop files (chunks only ever added are picked up by ``seq``). ``expires_at`` follows
# ``last_active_at`` when the store has an ``expires_after`` policy (JSON).
vector_stores = sa.Table(
    "vector_stores",
    metadata,
    _project(),
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("metadata", sa.Text, nullable=False),
    sa.Column("expires_after", sa.Text, nullable=True),
    sa.Column("expires_at", sa.Float, nullable=True),
    sa.Column("last_active_at", sa.Float, nullable=False),
    sa.Column("embedder", sa.String(256), nullable=False),
    sa.Column("dimensions", sa.Integer, nullable=False),
    sa.Column("epoch", sa.Integer, nullable=False, server_default="0"),
    sa.Index(
        "ix_vector_stores_project_seq", "project_id", "seq"
    ),  # a project's list (migration 0007)
)

# A file in a vector store (the id the API shows is the file's id). ``in_progress`` rows are
# ingested by a server instance that claims them (``claimed_by``); the claim of an instance
# that stopped beating is taken over. ``attempts`` counts claims, so a file that keeps killing
# its ingester fails instead of looping.
vector_store_files = sa.Table(
    "vector_store_files",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column(
        "vector_store_id",
        sa.String(96),
        sa.ForeignKey("vector_stores.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("file_id", sa.String(96), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("last_error", sa.Text, nullable=True),
    sa.Column("attributes", sa.Text, nullable=False),
    sa.Column("chunking_strategy", sa.Text, nullable=False),
    sa.Column("batch_id", sa.String(96), nullable=True),
    sa.Column("usage_bytes", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("claimed_by", sa.String(96), nullable=True),
    sa.Column("claimed_at", sa.Float, nullable=True),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("chunks_total", sa.Integer, nullable=True),  # unknown until the text is cut
    sa.Column("chunks_embedded", sa.Integer, nullable=False, server_default="0"),
    sa.UniqueConstraint("vector_store_id", "file_id", name="uq_vector_store_files_store_file"),
    sa.Index("ix_vector_store_files_store_seq", "vector_store_id", "seq"),
    sa.Index("ix_vector_store_files_batch_seq", "batch_id", "seq"),
    sa.Index("ix_vector_store_files_file", "file_id"),
    sa.Index("ix_vector_store_files_status", "status"),
)

vector_store_file_batches = sa.Table(
    "vector_store_file_batches",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    sa.Column(
        "vector_store_id",
        sa.String(96),
        sa.ForeignKey("vector_stores.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("cancelled", sa.Boolean, nullable=False, server_default=sa.false()),
)

# The chunks of the completed files: ``seq`` is the chunk id (in-memory indexes load the chunks
# past the last ``seq`` they saw, so a seq is never reused), ``vector`` the float32 embedding.
vector_store_chunks = sa.Table(
    "vector_store_chunks",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column(
        "vector_store_id",
        sa.String(96),
        sa.ForeignKey("vector_stores.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("file_id", sa.String(96), nullable=False),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("vector", sa.LargeBinary, nullable=False),
    sa.Index("ix_vector_store_chunks_store_seq", "vector_store_id", "seq"),
    sa.Index("ix_vector_store_chunks_store_file", "vector_store_id", "file_id"),
    sqlite_autoincrement=True,  # a seq is never reused, even after the newest chunks go
)

# code_interpreter containers: a working directory each (on disk, under the configured
# directory), deleted once unused for ``expires_minutes`` after ``last_active_at``.
# ``user_paths``: a JSON list of the files the user put in (the rest the code wrote).
containers = sa.Table(
    "containers",
    metadata,
    _project(),
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("name", sa.String(256), nullable=False),
    sa.Column("last_active_at", sa.Float, nullable=False),
    sa.Column("expires_minutes", sa.Integer, nullable=False),
    sa.Column("memory_limit", sa.String(8), nullable=True),
    sa.Column("user_paths", sa.Text, nullable=False),
    sa.Index("ix_containers_last_active_at", "last_active_at"),
    sa.Index("ix_containers_project_seq", "project_id", "seq"),  # a project's list (migration 0007)
)

# Chat completions created with ``store: true`` (``/v1/chat/completions`` list, retrieve, update,
# delete, and their request's messages): the answer as OpenAI's ChatCompletion object, the
# request's messages (a JSON array), the caller's metadata.
chat_completions = sa.Table(
    "chat_completions",
    metadata,
    _project(),
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("model", sa.String(256), nullable=False),
    sa.Column("metadata", sa.Text, nullable=False),  # JSON object of strings
    sa.Column("body", sa.Text, nullable=False),  # the ChatCompletion object, JSON
    sa.Column("messages", sa.Text, nullable=False),  # the request's messages, JSON array
    sa.Index("ix_chat_completions_project_seq", "project_id", "seq"),
)

# Traces the Agents SDK exports (``POST /v1/traces/ingest``): a trace's name, group and
# metadata, and its spans, each the SDK's exported object (JSON) with the response it names.
sdk_traces = sa.Table(
    "sdk_traces",
    metadata,
    _project(),
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("workflow_name", sa.String(512), nullable=True),
    sa.Column("group_id", sa.String(256), nullable=True),
    sa.Column("metadata", sa.Text, nullable=False),  # JSON object
    sa.UniqueConstraint("project_id", "id", name="uq_sdk_traces_project_id"),
    sa.Index("ix_sdk_traces_project_seq", "project_id", "seq"),
)
sdk_spans = sa.Table(
    "sdk_spans",
    metadata,
    _project(),
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False),
    sa.Column("trace_id", sa.String(96), nullable=False),
    sa.Column("response_id", sa.String(96), nullable=True),  # a ``response`` span's
    sa.Column("body", sa.Text, nullable=False),  # the span as the SDK exported it, JSON
    sa.UniqueConstraint("project_id", "id", name="uq_sdk_spans_project_id"),
    sa.Index("ix_sdk_spans_project_trace", "project_id", "trace_id"),
    sa.Index("ix_sdk_spans_project_response", "project_id", "response_id"),
)

# MCP connectors a project configures (``/v1/mcp_connectors``): the server's URL, and its
# headers and bearer token sealed (agentloom.sealing, purpose ``mcp_connector``).
mcp_connectors = sa.Table(
    "mcp_connectors",
    metadata,
    _project(),
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("server_url", sa.Text, nullable=False),
    sa.Column("description", sa.Text, nullable=True),
    sa.Column("credentials", sa.Text, nullable=False),  # sealed JSON: headers, authorization
    sa.UniqueConstraint("project_id", "id", name="uq_mcp_connectors_project_id"),
)

# --- tenancy ------------------------------------------------------------------------------------
# Projects own everything stored; ``project_id`` on each owned table names its project (the
# default project holds what was written before projects existed, and everything while
# authentication is off).
projects = sa.Table(
    "projects",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    sa.Column("name", sa.String(256), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("archived_at", sa.Float, nullable=True),
    sa.Column("model_policy", sa.Text, nullable=True),  # JSON {"mode", "model_ids"}; null: any
    sa.Column("tool_policy", sa.Text, nullable=True),  # JSON list of disabled hosted tools
    sa.Column("response_timeout", sa.Float, nullable=True),  # seconds; null: [limits]
    # seconds its stored responses are kept (0: forever); null: [retention] responses
    sa.Column("response_retention", sa.Float, nullable=True),
    sa.Column("access_rules", sa.Text, nullable=True),  # JSON list; null: no rules (all access)
)

# A project's service accounts: the owners of its API keys.
service_accounts = sa.Table(
    "service_accounts",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    sa.Column(
        "project_id",
        sa.String(96),
        sa.ForeignKey("projects.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("name", sa.String(256), nullable=False),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Index("ix_service_accounts_project_seq", "project_id", "seq"),
)

# API keys: never the key itself, only its keyed hash (``digest``, HMAC-SHA256 under the secret
# in ``auth_state``) and a redacted form to show. Revoking a key deletes its row.
api_keys = sa.Table(
    "api_keys",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    sa.Column(
        "project_id",
        sa.String(96),
        sa.ForeignKey("projects.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column(  # its owner: a service account of the project, or a user (one of the two)
        "service_account_id",
        sa.String(96),
        sa.ForeignKey("service_accounts.id", ondelete="CASCADE"),
        nullable=True,
    ),
    sa.Column("user_id", sa.String(96), sa.ForeignKey("users.id", ondelete="CASCADE")),
    sa.Column("scopes", sa.Text, nullable=True),  # JSON list (a restricted key); null: all
    sa.Column("name", sa.String(256), nullable=False),
    sa.Column("digest", sa.String(64), nullable=False, unique=True),
    sa.Column("redacted", sa.String(64), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("expires_at", sa.Float, nullable=True),
    sa.Column("last_used_at", sa.Float, nullable=True),
    sa.Index("ix_api_keys_project_seq", "project_id", "seq"),
)

# One row: the secret API keys are hashed under, and ``epoch``, which grows with every change
# that may invalidate a key some process has cached (a revocation, an archived project).
auth_state = sa.Table(
    "auth_state",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("secret", sa.String(128), nullable=False),
    sa.Column("epoch", sa.BigInteger, nullable=False),
)


# The tables whose rows belong to a project, each with a ``project_id`` column.
OWNED: tuple[sa.Table, ...] = (
    responses,
    items,
    conversations,
    conversation_items,
    prompts,
    files,
    vector_stores,
    containers,
    chat_completions,
    sdk_traces,
    sdk_spans,
    mcp_connectors,
)

# The agent SDK's own state (agentloom.agents): sessions, tick records and memory notes. Names
# and SQLite types are those of the files the SDK wrote before these tables moved here, so an
# old ``agents.db`` / ``memory.db`` opens as it is (migration 0006 adds only what is missing).
Seconds = sa.Float().with_variant(sa.REAL(), "sqlite")  # unix seconds: REAL, double precision

# A session of an agent: its history (a JSON array of messages) and state (a JSON object).
agent_sessions = sa.Table(
    "agent_sessions",
    metadata,
    sa.Column("agent", sa.Text, primary_key=True),
    sa.Column("session_id", sa.Text, primary_key=True),
    sa.Column("history", sa.Text, nullable=False, server_default="[]"),
    sa.Column("state", sa.Text, nullable=False, server_default="{}"),
    sa.Column("updated_at", Seconds, nullable=False),
)

# One tick of a scheduled agent's session: ``number`` counts the session's ticks from 1.
agent_ticks = sa.Table(
    "agent_ticks",
    metadata,
    sa.Column("id", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("agent", sa.Text, nullable=False),
    sa.Column("session_id", sa.Text, nullable=False),
    sa.Column("number", sa.Integer, nullable=False),
    sa.Column("started_at", Seconds, nullable=False),
    sa.Column("finished_at", Seconds, nullable=True),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("summary", sa.Text, nullable=False, server_default=""),
    sa.Index("agent_ticks_session", "agent", "session_id", "id"),
    sqlite_autoincrement=True,
)

# Notes an agent keeps (``memory_store``), searched by keywords: ``terms`` holds the note's
# distinct keywords, space-separated.
memories = sa.Table(
    "memories",
    metadata,
    sa.Column("id", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("namespace", sa.Text, nullable=False),
    sa.Column("content", sa.Text, nullable=False),
    sa.Column("terms", sa.Text, nullable=False),
    sa.Column("created_at", Seconds, nullable=False),
    sa.Index("memories_namespace", "namespace", "id"),
    sqlite_autoincrement=True,
)

# Usage, aggregated per minute, project, key and model (each process adds its own rows; reads
# sum them).
usage_records = sa.Table(
    "usage_records",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("minute", sa.BigInteger, nullable=False),  # unix seconds, a multiple of 60
    sa.Column("project_id", sa.String(96), nullable=False),
    sa.Column("key_id", sa.String(128), nullable=True),
    sa.Column("model", sa.String(256), nullable=False),
    sa.Column("requests", sa.Integer, nullable=False),
    sa.Column("input_tokens", sa.BigInteger, nullable=False),
    sa.Column("cached_tokens", sa.BigInteger, nullable=False),
    sa.Column("output_tokens", sa.BigInteger, nullable=False),
    sa.Column("reasoning_tokens", sa.BigInteger, nullable=False),
    sa.Column("file_search_calls", sa.Integer, nullable=False),
    sa.Column("web_search_calls", sa.Integer, nullable=False),
    sa.Column("code_interpreter_sessions", sa.Integer, nullable=False),
    sa.Column("mcp_calls", sa.Integer, nullable=False),
    sa.Column("embedding_requests", sa.Integer, nullable=False, server_default="0"),
    sa.Column("embedding_tokens", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("moderation_requests", sa.Integer, nullable=False, server_default="0"),
    sa.Column("moderation_tokens", sa.BigInteger, nullable=False, server_default="0"),
    # what the tokens cost, in nano-dollars (10^-9 USD), priced once when they were recorded
    sa.Column("cost_input", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("cost_cached", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("cost_output", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("cost_embeddings", sa.BigInteger, nullable=False, server_default="0"),
    sa.Index("ix_usage_records_minute", "minute"),  # (migration 0008)
)


# Rate limits per project and model, and the counters that enforce them across processes: one
# row per (project, model, window kind, window start), incremented atomically.
rate_limits = sa.Table(
    "rate_limits",
    metadata,
    sa.Column("project_id", sa.String(96), primary_key=True),
    sa.Column("model", sa.String(256), primary_key=True),
    sa.Column("max_requests_per_1_minute", sa.Integer, nullable=False),
    sa.Column("max_tokens_per_1_minute", sa.Integer, nullable=False),
    sa.Column("max_requests_per_1_day", sa.Integer, nullable=False),
)
rate_windows = sa.Table(
    "rate_windows",
    metadata,
    sa.Column("project_id", sa.String(96), primary_key=True),
    sa.Column("model", sa.String(256), primary_key=True),
    sa.Column("window", sa.String(1), primary_key=True),  # "m": a minute, "d": a day
    sa.Column("start", sa.BigInteger, primary_key=True),
    sa.Column("requests", sa.Integer, nullable=False),
    sa.Column("tokens", sa.BigInteger, nullable=False),
)

# What administrators did, with who did it.
audit_logs = sa.Table(
    "audit_logs",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    sa.Column("type", sa.String(64), nullable=False),
    sa.Column("effective_at", sa.Float, nullable=False),
    sa.Column("project_id", sa.String(96), nullable=True),
    sa.Column("actor_id", sa.String(128), nullable=False),
    sa.Column("actor_user_id", sa.String(96), nullable=True),  # a user's key: its user
    sa.Column("body", sa.Text, nullable=False),  # the whole entry as JSON
    sa.Index("ix_audit_logs_effective_at", "effective_at"),  # made by 0008
)

# Admin keys made through the admin API (beside the one from the environment): like project
# keys, only their keyed hash and a redacted form are kept.
admin_keys = sa.Table(
    "admin_keys",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    sa.Column("name", sa.String(256), nullable=False),
    sa.Column("digest", sa.String(64), nullable=False, unique=True),
    sa.Column("redacted", sa.String(64), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("expires_at", sa.Float, nullable=True),
    sa.Column("last_used_at", sa.Float, nullable=True),
)

# --- background work -----------------------------------------------------------------------
# Durable jobs, shared by every server process: a process claims a queued job (``claimed_by``)
# and keeps renewing its lease (``lease_until``); a job whose lease ran out (its process died)
# is taken over by another. ``payload``: what the job runs (JSON, by ``kind``).
jobs = sa.Table(
    "jobs",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    _project(),
    sa.Column("kind", sa.String(32), nullable=False),
    # what the job is about: a response id, a delivery id, "<vector store id>/<file id>"
    sa.Column("subject", sa.String(200), nullable=False),
    sa.Column("key_id", sa.String(128), nullable=True),  # who asked for it
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),  # queued, running, done
    sa.Column("claimed_by", sa.String(96), nullable=True),
    sa.Column("lease_until", sa.Float, nullable=True),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("cancel_requested", sa.Boolean, nullable=False, server_default=sa.false()),
    # set once the job did something that must not happen twice (a tool with side effects)
    sa.Column("irreversible", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("run_after", sa.Float, nullable=True),  # a queued job waits until then
    sa.Index("ix_jobs_status_seq", "status", "seq"),
    sa.Index("ix_jobs_subject", "subject"),
    # the fair claim: queued and running jobs by kind and project, oldest first, when due
    sa.Index("ix_jobs_claim", "status", "kind", "project_id", "seq", "run_after"),
)

# When a project's queue of jobs of one kind was last served (a job of it claimed): claims go
# round the projects with jobs waiting, the least recently served first.
job_queues = sa.Table(
    "job_queues",
    metadata,
    sa.Column("kind", sa.String(32), primary_key=True),
    sa.Column("project_id", sa.String(96), primary_key=True),
    sa.Column("served_at", sa.Float, nullable=False),
)

# The stream events of background responses, in order, as they were made.
response_events = sa.Table(
    "response_events",
    metadata,
    sa.Column("response_id", sa.String(96), primary_key=True),
    sa.Column("sequence_number", sa.Integer, primary_key=True),
    _project(),
    sa.Column("type", sa.String(64), nullable=False),
    sa.Column("body", sa.Text, nullable=False),
)

# --- webhooks ------------------------------------------------------------------------------
# A project's endpoints: where its events are sent, signed with the endpoint's secret (sealed:
# the server must sign with it again, so it cannot be kept as a hash). After a rotation that
# keeps the old secret for a while, deliveries carry a signature by each.
webhook_endpoints = sa.Table(
    "webhook_endpoints",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    _project(),
    sa.Column("name", sa.String(256), nullable=False),
    sa.Column("url", sa.Text, nullable=False),
    sa.Column("event_types", sa.Text, nullable=False),  # a JSON list
    sa.Column("secret", sa.Text, nullable=False),  # sealed
    sa.Column("secret_hint", sa.String(32), nullable=False),
    sa.Column("old_secret", sa.Text, nullable=True),  # sealed; valid until old_secret_until
    sa.Column("old_secret_until", sa.Float, nullable=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.Index("ix_webhook_endpoints_project", "project_id", "seq"),
)

# One event for one endpoint: its body is fixed when the event happens (every attempt sends the
# same bytes under the same ``webhook-id``); ``attempts`` is a JSON list of what each try got.
webhook_deliveries = sa.Table(
    "webhook_deliveries",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),  # the webhook-id header
    _project(),
    sa.Column("endpoint_id", sa.String(96), nullable=False),
    sa.Column("event_id", sa.String(96), nullable=False),
    sa.Column("event_type", sa.String(64), nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),  # pending, delivered, failed
    sa.Column("attempts", sa.Text, nullable=False, server_default="[]"),
    sa.Column("next_attempt_at", sa.Float, nullable=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("ended_at", sa.Float, nullable=True),
    sa.Index("ix_webhook_deliveries_endpoint", "endpoint_id", "seq"),
)

# --- schedules -----------------------------------------------------------------------------
# Work that recurs: when ``next_run_at`` comes, one process (a guarded update) queues a job of
# ``kind`` for ``subject`` and moves ``next_run_at`` on (``every`` seconds, or the next time of
# ``cron``). A schedule whose last job has not ended waits for it: runs never overlap.
schedules = sa.Table(
    "schedules",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    _project(),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("subject", sa.String(200), nullable=False),
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("every", sa.Float, nullable=True),  # seconds between runs, start to start
    sa.Column("cron", sa.String(256), nullable=True),  # or a cron expression (UTC)
    sa.Column("next_run_at", sa.Float, nullable=False),
    sa.Column("paused", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("last_job_id", sa.String(96), nullable=True),
    sa.Column("runs", sa.Integer, nullable=False, server_default="0"),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Index("ix_schedules_next_run_at", "next_run_at"),
    sa.Index("ix_schedules_subject", "subject"),
)

MANAGED_AGENT_TABLES = (  # owned too (see OWNED)
    managed_agents,
    managed_agent_messages,
    managed_agent_runs,
    managed_agent_tasks,
)
OWNED += MANAGED_AGENT_TABLES


OWNED += (batches, batch_results)
# The objects people create have an owner (access rules, issue 41): agentloom.access_rules.
for _owned in (responses, conversations, files, vector_stores, containers, prompts):
    _owned.append_column(owner_column())
for _owned in (chat_completions, batches, managed_agents, jobs):  # a job: whose its work is
    _owned.append_column(owner_column())
