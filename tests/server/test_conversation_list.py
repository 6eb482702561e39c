"""``GET /v1/conversations`` (an agentloom extension: OpenAI lists no conversations), through
the official ``openai`` client's own pagination, on SQLite and PostgreSQL: keyset pages, both
orders, the project's conversations only."""

from __future__ import annotations

import httpx2
import openai
import pytest
from openai.pagination import AsyncCursorPage
from openai.types.conversations import Conversation

from tests.plugins.tenants import Tenant
from tests.server.test_errors import the_error

pytestmark = pytest.mark.both_databases  # what these check depends on the storage


async def listed(client: openai.AsyncOpenAI, **params: object) -> list[Conversation]:
    """Every conversation the client's paginator walks to (``after`` the last id of a page)."""
    pages = client.get_api_list(
        "/conversations",
        page=AsyncCursorPage[Conversation],
        model=Conversation,
        options={"params": params},
    )
    return [conversation async for conversation in pages]


async def test_pages_walk_every_conversation_once_newest_first(client: openai.AsyncOpenAI) -> None:
    made = [(await client.conversations.create(metadata={"n": str(n)})).id for n in range(5)]

    newest_first = await listed(client, limit=2)
    oldest_first = await listed(client, limit=2, order="asc")

    assert [c.id for c in newest_first] == made[::-1]
    assert [c.id for c in oldest_first] == made
    assert newest_first[0].metadata == {"n": "4"}
    assert all(c.object == "conversation" for c in newest_first)


async def test_a_page_is_an_openai_list(http: httpx2.AsyncClient) -> None:
    empty = (await http.get("/conversations")).json()
    first = (await http.post("/conversations", json={})).json()["id"]
    second = (await http.post("/conversations", json={})).json()["id"]

    page = (await http.get("/conversations", params={"limit": 1})).json()
    rest = (await http.get("/conversations", params={"limit": 1, "after": second})).json()

    assert empty == {
        "object": "list",
        "data": [],
        "first_id": None,
        "last_id": None,
        "has_more": False,
    }
    assert (page["first_id"], page["last_id"], page["has_more"]) == (second, second, True)
    assert [c["id"] for c in rest["data"]] == [first]
    assert rest["has_more"] is False


async def test_a_deleted_conversation_is_not_listed(client: openai.AsyncOpenAI) -> None:
    kept = await client.conversations.create()
    gone = await client.conversations.create()
    await client.conversations.delete(gone.id)

    assert [c.id for c in await listed(client)] == [kept.id]


async def test_bad_parameters(http: httpx2.AsyncClient) -> None:
    unknown = the_error(await http.get("/conversations", params={"after": "conv_nope"}), 404)
    malformed = the_error(await http.get("/conversations", params={"after": "resp_1"}), 404)
    limit = the_error(await http.get("/conversations", params={"limit": "0"}), 400)
    order = the_error(await http.get("/conversations", params={"order": "up"}), 400)

    assert unknown["param"] == malformed["param"] == "after"
    assert "conv_nope" in unknown["message"]
    assert (limit["param"], order["param"]) == ("limit", "order")


async def test_another_projects_conversations_are_never_listed(
    alpha: Tenant, beta: Tenant, raw: httpx2.AsyncClient
) -> None:
    mine = await alpha.client.conversations.create(metadata={"of": "alpha"})
    theirs = await beta.client.conversations.create(metadata={"of": "beta"})

    assert [c.id for c in await listed(alpha.client)] == [mine.id]
    assert [c.id for c in await listed(beta.client)] == [theirs.id]
    across = await raw.get("/conversations", params={"after": theirs.id}, headers=alpha.headers)
    assert the_error(across, 404)["param"] == "after"  # their id is no cursor here
