"""Tenancy is structural: every statement the server runs on a table with a ``project_id``
column names the project it acts for, unless it is marked as work that serves every project
(:func:`agentloom.storage.scoped.across_projects`).

Two projects do everything the tables hold through the real app and the official client
(responses, background responses and their events, conversations, files, vector stores and
their ingestion, containers, prompts, webhooks and deliveries, managed agents with their
messages, runs, tasks and schedules, batches and their results, the admin API's accounts and
keys, a project's users, groups, roles and a user's key), and one reads the
other's objects by id. Every statement is heard where the driver runs it (SQLite's trace
callback; on PostgreSQL SQLAlchemy's cursor events and asyncpg's query logger for the hot
path's own pool). A statement that touches a project's table unmarked must constrain each such
table's ``project_id`` and bind one of the two projects' ids; and each project table must be
reached so by some statement of the workload, unless :data:`UNWALKED` says why not (a table
added to the schema without either fails here).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import httpx2
import openai
import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine

from agentloom.storage import schema
from agentloom.storage.scoped import ACROSS_PROJECTS
from agentloom.tenancy import DEFAULT_PROJECT
from agentloom.testing.backend import FakeBackend
from tests.plugins import split
from tests.plugins.tenants import ADMIN, Tenant, new_tenant, sdk
from tests.server.test_people import new_user, user_key
from tests.server.test_tenancy import make_everything

PROJECT_TABLES = frozenset(t.name for t in schema.metadata.sorted_tables if "project_id" in t.c)

# Project tables no unmarked statement of the workload reaches, and why.
UNWALKED: dict[str, str] = {
    "usage_records": "usage is flushed for every project at once, and read by the organization",
    "job_queues": "the fair claim's bookkeeping, written by the claimer (across projects)",
    "audit_logs": "the organization's log, written and read by the admin API",
    "rate_limits": "read and set for a project the caller names (the admin API, the limiter)",
    "rate_windows": "counted for a project the caller names (the limiter), with limits set",
    "request_log": "every project's rows written at once with the usage, read by the organization",
    "spend_totals": "added for every project at once with the usage, read by the budgets",
}

_KEYWORDS = (  # words that follow a table's name but are no alias of it
    "where|set|on|join|left|right|inner|outer|full|cross|natural|using|select|values|group|"
    "order|limit|returning|default|with|for|union"
)
_REFERENCE = re.compile(
    r'\b(?:FROM|JOIN|INTO|UPDATE)\s+"?(\w+)"?'
    rf'(?:\s+(?:AS\s+)?(?!(?:{_KEYWORDS})\b)"?(\w+)"?)?',
    re.I,
)


@dataclass
class Heard:
    """The statements run, with their parameters as text."""

    statements: list[tuple[str, str]] = field(default_factory=list)

    def __call__(self, sql: str, params: object = ()) -> None:
        self.statements.append((sql, repr(params)))


def _references(sql: str) -> dict[str, set[str]]:
    """The project tables ``sql`` reads or writes, each with the names it goes by there."""
    found: dict[str, set[str]] = {}
    for table, alias in _REFERENCE.findall(sql):
        if table in PROJECT_TABLES:
            names = found.setdefault(table, {table})
            if alias:
                names.add(alias)
    return found


def _constrained(sql: str, table: str, names: set[str], alone: bool) -> bool:
    """Whether ``sql`` names the project of ``table``'s rows: a qualified ``project_id``, the
    column in its insert, or (the statement's only table) the bare column."""
    qualified = "|".join(re.escape(n) for n in names)
    if re.search(rf'\b"?(?:{qualified})"?\."?project_id\b', sql):
        return True
    insert = re.search(rf'INTO\s+"?{table}"?\s*\(([^)]*)\)', sql, re.I)
    if insert is not None and "project_id" in insert.group(1):
        return True
    return alone and re.search(r"\bproject_id\b", sql) is not None


def unscoped(heard: Heard, projects: set[str]) -> tuple[list[str], set[str]]:
    """The unmarked statements on project tables that do not name a project, and the tables
    the others reach."""
    wrong: list[str] = []
    reached: set[str] = set()
    for sql, params in heard.statements:
        tables = _references(sql)
        if not tables or ACROSS_PROJECTS in sql:
            continue
        all_tables = {t for t, _ in _REFERENCE.findall(sql)}
        alone = len(all_tables) == 1
        named = any(p in sql or p in params for p in projects)
        ok = named and all(_constrained(sql, t, n, alone) for t, n in tables.items())
        if ok:
            reached.update(tables)
        else:
            wrong.append(" ".join(sql.split()))
    return sorted(set(wrong)), reached


@contextmanager
def _listening_sqlite(heard: Heard) -> Iterator[None]:
    split.LISTENERS.append(heard)
    try:
        yield
    finally:
        split.LISTENERS.remove(heard)


@contextmanager
def _listening_postgres(heard: Heard, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def cursor(*args: Any) -> None:
        heard(args[2], args[3])

    def logged(record: Any) -> None:
        heard(record.query, record.args)

    original: Callable[..., Any] = asyncpg.create_pool

    def create_pool(*args: Any, **kwargs: Any) -> Any:
        async def init(conn: asyncpg.Connection) -> None:
            conn.add_query_logger(logged)

        return original(*args, init=init, **kwargs)

    monkeypatch.setattr(asyncpg, "create_pool", create_pool)
    event.listen(Engine, "before_cursor_execute", cursor)
    try:
        yield
    finally:
        event.remove(Engine, "before_cursor_execute", cursor)


@pytest.fixture
def heard(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Heard]:
    """Every statement the app runs (listening starts before the app does)."""
    found = Heard()
    if database_url.startswith("sqlite"):
        with _listening_sqlite(found):
            yield found
    else:
        with _listening_postgres(found, monkeypatch):
            yield found


async def _post(client: openai.AsyncOpenAI, path: str, body: dict[str, Any]) -> dict[str, Any]:
    reply = await client.post(path, cast_to=httpx2.Response, body=body)
    assert reply.status_code == 200, reply.text
    made: dict[str, Any] = reply.json()
    return made


async def _background(tenant: Tenant, backend: FakeBackend) -> None:
    """A background response (its job, its stored events, its webhook delivery), to its end."""
    started = await tenant.client.responses.create(model=backend.model, input="Hi", background=True)
    for _ in range(200):
        done = await tenant.client.responses.retrieve(started.id)
        if done.status not in ("queued", "in_progress"):
            break
        await asyncio.sleep(0.02)
    replay = await tenant.client.get(
        f"/responses/{started.id}", cast_to=httpx2.Response, options={"params": {"stream": True}}
    )
    assert replay.status_code == 200


async def _batch(tenant: Tenant, batch_id: str) -> None:
    """The batch run to its end (its job, its results, its output file), read and listed."""
    for _ in range(200):
        batch = await tenant.client.batches.retrieve(batch_id)
        if batch.status in ("completed", "failed"):
            break
        await asyncio.sleep(0.02)
    assert batch.status == "completed", batch.errors
    await tenant.client.files.content(batch.output_file_id or "")
    await tenant.client.batches.list(after=batch_id)


async def _conversation_turns(tenant: Tenant, backend: FakeBackend, conversation: str) -> None:
    """Items added, a response run on the conversation (its lock, its turn), one deleted."""
    added = await tenant.client.conversations.items.create(
        conversation, items=[{"type": "message", "role": "user", "content": "more"}]
    )
    await tenant.client.responses.create(model=backend.model, input="Hi", conversation=conversation)
    await tenant.client.conversations.items.delete(added.data[0].id, conversation_id=conversation)


async def _stored_completion(tenant: Tenant, backend: FakeBackend) -> str:
    """A chat completion stored, listed, its metadata changed, its messages read; another
    stays for the other project to ask for."""
    messages = [{"role": "user", "content": "Hi"}]
    chat = tenant.client.chat.completions
    gone = await chat.create(model=backend.model, messages=messages, store=True)
    await chat.list(metadata={"k": "v"})
    await chat.update(gone.id, metadata={"k": "w"})
    await chat.messages.list(gone.id)
    await chat.delete(gone.id)
    kept = await chat.create(model=backend.model, messages=messages, store=True)
    return kept.id


async def _sdk_trace(tenant: Tenant) -> str:
    """What the Agents SDK's exporter sends, sent twice (a retried batch), listed (all, by a
    response) and read back."""
    span = {"object": "trace.span", "id": "span_1", "trace_id": "trace_1"}
    span["span_data"] = {"type": "response", "response_id": "resp_1"}
    body = {"data": [{"object": "trace", "id": "trace_1", "workflow_name": "w"}, span]}
    await _post(tenant.client, "/traces/ingest", body)
    await _post(tenant.client, "/traces/ingest", body)
    await tenant.client.get("/traces", cast_to=httpx2.Response)
    await tenant.client.get("/traces?response_id=resp_1", cast_to=httpx2.Response)
    await tenant.client.get("/traces/trace_1", cast_to=httpx2.Response)
    return "trace_1"


async def _mcp_connector(tenant: Tenant) -> str:
    """A connector configured twice (replaced), listed, read; deleted and configured again."""
    body = {"id": "connector_gmail", "server_url": "https://mcp.example/mcp", "authorization": "t"}
    await _post(tenant.client, "/mcp_connectors", body)
    await _post(tenant.client, "/mcp_connectors", body)
    await tenant.client.get("/mcp_connectors", cast_to=httpx2.Response)
    await tenant.client.delete("/mcp_connectors/connector_gmail", cast_to=httpx2.Response)
    await _post(tenant.client, "/mcp_connectors", body)
    return "connector_gmail"


async def _scheduled_agent(tenant: Tenant, backend: FakeBackend) -> None:
    config = {"model": backend.model, "schedule": {"type": "interval", "every": 3600}}
    agent = await _post(
        tenant.client, "/managed-agents", {"name": "s", "agent_type": "simple", "config": config}
    )
    await tenant.client.delete(f"/managed-agents/{agent['id']}", cast_to=httpx2.Response)


async def _people(raw: httpx2.AsyncClient, tenant: Tenant) -> None:
    """A user in the project by name and through a group, with a project role, and a key of
    theirs used (its principal resolved from memberships and assignments)."""
    org = sdk(raw, admin_api_key=ADMIN).admin.organization
    project = tenant.project_id
    ada = await new_user(raw, "ada@example.com", [{"id": project, "role": "member"}])
    group = await org.groups.create(name="g")
    role = await org.projects.roles.create(project, role_name="r", permissions=["api.all.read"])
    await org.projects.groups.create(project, group_id=group.id, role=role.id)
    await org.projects.users.roles.create(ada, project_id=project, role_id=role.id)
    key = await user_key(raw, project, ada)
    assert (await sdk(raw, key["value"]).models.list()).data is not None
    assert [u.id async for u in org.projects.users.list(project)] == [ada]
    assert [g.group_id async for g in org.projects.groups.list(project)] == [group.id]
    assert role.id in [r.id async for r in org.projects.roles.list(project)]
    assert [r.id async for r in org.projects.users.roles.list(ada, project_id=project)]
    await org.projects.users.delete(ada, project_id=project)


async def _others_read(raw: httpx2.AsyncClient, reader: Tenant, ids: dict[str, str]) -> None:
    """``reader`` asks for another project's objects by id: each is a 404."""
    paths = [
        f"/responses/{ids['response_id']}",
        f"/responses/{ids['response_id']}/input_items",
        f"/conversations/{ids['conversation_id']}",
        f"/conversations/{ids['conversation_id']}/items",
        f"/files/{ids['file_id']}",
        f"/vector_stores/{ids['vector_store_id']}",
        f"/containers/{ids['container_id']}",
        f"/prompts/{ids['prompt_id']}",
        f"/webhook_endpoints/{ids['webhook_endpoint_id']}",
        f"/managed-agents/{ids['managed_agent_id']}",
        f"/managed-agents/{ids['managed_agent_id']}/tasks/{ids['task_id']}",
        f"/chat/completions/{ids['chat_completion_id']}",
        f"/chat/completions/{ids['chat_completion_id']}/messages",
        f"/traces/{ids['trace_id']}",
        f"/mcp_connectors/{ids['connector_id']}",
        f"/batches/{ids['api_batch_id']}",
    ]
    for path in paths:
        reply = await raw.get(path, headers=reader.headers)
        assert reply.status_code == 404, path


async def test_every_statement_on_a_projects_table_names_the_project(
    heard: Heard, raw: httpx2.AsyncClient, backend: FakeBackend
) -> None:
    alpha = await new_tenant(raw, "alpha")
    beta = await new_tenant(raw, "beta")
    hook = await alpha.client.webhooks.create(
        name="h", url="https://10.9.9.9/hook", event_types=["response.completed"]
    )
    owned = await make_everything(alpha, backend)
    await _background(alpha, backend)
    await _batch(alpha, owned.ids["api_batch_id"])
    await _conversation_turns(alpha, backend, owned.ids["conversation_id"])
    await _scheduled_agent(alpha, backend)
    owned.ids["chat_completion_id"] = await _stored_completion(alpha, backend)
    owned.ids["trace_id"] = await _sdk_trace(alpha)
    owned.ids["connector_id"] = await _mcp_connector(alpha)
    await _others_read(raw, beta, owned.ids)
    await _people(raw, alpha)
    await alpha.client.webhooks.delete(hook.id)
    await asyncio.sleep(0.05)  # asyncpg tells its query loggers on the next loop turns

    # (work with no project of its own, the admin key's, acts in the default project)
    wrong, reached = unscoped(heard, {alpha.project_id, beta.project_id, DEFAULT_PROJECT})

    assert wrong == []
    assert set(UNWALKED) <= PROJECT_TABLES
    assert PROJECT_TABLES - reached - set(UNWALKED) == set()


def test_a_statement_that_forgets_the_project_is_found() -> None:
    """The check itself: what a store that forgot would run fails it."""
    heard = Heard()
    heard("SELECT files.id FROM files WHERE files.id = ?", ("file_1",))
    heard(
        "SELECT items.body FROM responses JOIN items ON items.response_id = responses.id"
        " WHERE responses.id = ? AND responses.project_id = ?",
        ("resp_1", "proj_a"),
    )
    heard("UPDATE files SET filename=? WHERE files.project_id = ?", ("x", "proj_default"))
    heard(f"SELECT {ACROSS_PROJECTS} files.id FROM files", ())
    heard("INSERT INTO files (id, project_id) VALUES ('file_2', 'proj_a')")

    wrong, reached = unscoped(heard, {"proj_a"})

    assert len(wrong) == 3
    assert reached == {"files"}
