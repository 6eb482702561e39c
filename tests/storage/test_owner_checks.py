"""Access rules are structural too: under a project's rules, every statement a user's request
runs on a table of objects with owners carries the rules' condition on the owner, and every
insert records the owner, unless the statement is one the rules leave alone on purpose
(:data:`UNCHECKED`). Heard where the driver runs it, as ``test_scoping`` hears statements.

The workload is a user's foreground requests on every kind of object (background jobs act for
the project without the rules: they were admitted when queued)."""

from __future__ import annotations

import asyncio
import re

import httpx2
import pytest

from agentloom.access_rules import RESOURCES
from agentloom.storage.scoped import ACROSS_PROJECTS
from agentloom.testing.backend import FakeBackend
from tests.plugins.tenants import Tenant
from tests.server.test_access_rules import PRIVATE, set_rules, team
from tests.storage.test_scoping import Heard, heard  # noqa: F401 - the fixture

pytestmark = pytest.mark.both_databases

# Statements on owned tables that the rules leave alone, and why.
UNCHECKED: dict[str, str] = {
    r"^UPDATE responses SET status": "the run's own writes of its response (not the API's update)",
    r"^WITH r AS \(\s*UPDATE responses SET status": "the same, on PostgreSQL's one round trip",
    r"INSERT INTO conversation_items": "a turn's items follow their conversation, checked first",
    r"^UPDATE conversations SET version=\(conversations.version \+": (
        "the version bump after items changed, in the transaction that checked the conversation"
    ),
}
_TOUCHES = re.compile(r'\b(?:FROM|JOIN|INTO|UPDATE)\s+"?(\w+)"?', re.I)


def unchecked(statements: Heard) -> list[str]:
    """The statements on owned tables without the owner in them."""
    wrong = []
    for sql, _ in statements.statements:
        flat = " ".join(sql.split())
        owned = {t for t in _TOUCHES.findall(flat) if t in RESOURCES}
        if not owned or ACROSS_PROJECTS in flat or re.search(r"\bowner\b", flat):
            continue
        if any(re.search(pattern, flat) for pattern in UNCHECKED):
            continue
        wrong.append(flat)
    return sorted(set(wrong))


async def _work(ada: Tenant, backend: FakeBackend) -> None:
    client = ada.client
    response = await client.responses.create(model=backend.model, input="Hi")
    await client.responses.retrieve(response.id)
    await client.responses.input_items.list(response.id)
    await client.responses.create(
        model=backend.model, input="Again", previous_response_id=response.id
    )
    await client.get("/responses", cast_to=httpx2.Response)
    conversation = await client.conversations.create(
        items=[{"type": "message", "role": "user", "content": "hello"}]
    )
    await client.responses.create(model=backend.model, input="Hi", conversation=conversation.id)
    items = await client.conversations.items.list(conversation.id)
    await client.conversations.items.retrieve(items.data[0].id, conversation_id=conversation.id)
    await client.conversations.update(conversation.id, metadata={"k": "v"})
    await client.conversations.items.delete(items.data[0].id, conversation_id=conversation.id)
    uploaded = await client.files.create(file=("n.txt", b"kettle"), purpose="user_data")
    await client.files.retrieve(uploaded.id)
    await client.files.list()
    store = await client.vector_stores.create(name="s")
    await client.vector_stores.retrieve(store.id)
    await client.vector_stores.update(store.id, name="t")
    await client.vector_stores.list()
    container = await client.containers.create(name="c")
    await client.containers.retrieve(container.id)
    await client.containers.list()
    prompt = (await client.post("/prompts", cast_to=httpx2.Response, body={"prompt": "Be."})).json()
    await client.get(f"/prompts/{prompt['id']}", cast_to=httpx2.Response)
    await client.get("/prompts", cast_to=httpx2.Response)
    completion = await client.chat.completions.create(
        model=backend.model, messages=[{"role": "user", "content": "Hi"}], store=True
    )
    await client.chat.completions.retrieve(completion.id)
    await client.chat.completions.update(completion.id, metadata={"k": "v"})
    await client.chat.completions.messages.list(completion.id)
    await client.chat.completions.list()
    agent = await client.post(
        "/managed-agents",
        cast_to=httpx2.Response,
        body={"name": "a", "agent_type": "simple", "config": {"model": backend.model}},
    )
    agent_id = agent.json()["id"]
    await client.get(f"/managed-agents/{agent_id}", cast_to=httpx2.Response)
    await client.post(
        f"/managed-agents/{agent_id}/tasks", cast_to=httpx2.Response, body={"description": "d"}
    )
    await client.get("/managed-agents", cast_to=httpx2.Response)
    await client.delete(f"/managed-agents/{agent_id}", cast_to=httpx2.Response)
    await client.chat.completions.delete(completion.id)
    await client.delete(f"/prompts/{prompt['id']}", cast_to=httpx2.Response)
    await client.containers.delete(container.id)
    await client.vector_stores.delete(store.id)
    await client.files.delete(uploaded.id)
    await client.conversations.delete(conversation.id)
    await client.responses.delete(response.id)


async def test_every_statement_on_an_owned_table_checks_the_owner(
    heard: Heard,  # noqa: F811 - the fixture
    raw: httpx2.AsyncClient,
    alpha: Tenant,
    backend: FakeBackend,
) -> None:
    ada, _, _ = await team(raw, alpha)
    await set_rules(raw, alpha.project_id, PRIVATE)
    heard.statements.clear()

    await _work(ada, backend)
    await asyncio.sleep(0.05)  # asyncpg tells its query loggers on the next loop turns

    wrong = unchecked(heard)
    assert not wrong, "\n".join(wrong)
    assert any("owner" in sql for sql, _ in heard.statements)


def test_a_statement_without_the_owner_is_found() -> None:
    found = Heard()
    found("SELECT files.id FROM files WHERE files.project_id = ? AND files.id = ?")
    found("SELECT files.id FROM files WHERE files.project_id = ? AND files.owner = ?")
    found("INSERT INTO files (id, project_id) VALUES (?, ?)")
    found("INSERT INTO files (id, project_id, owner) VALUES (?, ?, ?)")
    found("SELECT items.id FROM items WHERE items.project_id = ?")

    assert len(unchecked(found)) == 2
