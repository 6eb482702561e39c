"""``GET /v1/responses`` filtered by status, creation time and metadata (agentloom's list of
stored responses): the filters combine, pages walk the matches only, bad values are a 400 naming
the parameter, and another project's responses never show."""

from __future__ import annotations

import time
from typing import Any

import httpx2
import openai
import pytest

from agentloom.errors import UpstreamError
from agentloom.inference.scripted import ScriptedModel, raise_error
from agentloom.testing.backend import FakeBackend
from tests.plugins.tenants import Tenant

pytestmark = pytest.mark.both_databases  # what these check depends on the storage


async def listed(http: httpx2.AsyncClient, **params: Any) -> list[str]:
    reply = await http.get("/responses", params=params)
    assert reply.status_code == 200, reply.text
    return [r["id"] for r in reply.json()["data"]]


async def test_filters_by_metadata_status_and_time(
    http: httpx2.AsyncClient,
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    before = int(time.time())
    made = [
        await client.responses.create(model=backend.model, input="Hi", metadata=tags)
        for tags in ({"team": "a", "env": "prod"}, {"team": "b", "env": "prod"}, {"team": "a"})
    ]
    scripted.add_turn(raise_error(UpstreamError("model crashed", status=500)))
    with pytest.raises(openai.InternalServerError):
        await client.responses.create(model=backend.model, input="Hi", metadata={"team": "a"})
    failed = (await listed(http, status="failed"))[0]
    ids = [r.id for r in made]

    assert await listed(http, **{"metadata[team]": "a"}) == [failed, ids[2], ids[0]]
    assert await listed(http, **{"metadata[team]": "a", "metadata[env]": "prod"}) == [ids[0]]
    assert await listed(http, **{"metadata[team]": "a", "status": "completed"}) == [
        ids[2],
        ids[0],
    ]
    assert await listed(http, **{"metadata[team]": "c"}) == []
    assert await listed(http, status="completed", order="asc") == ids
    assert await listed(http, status="cancelled") == []
    later = int(time.time()) + 2
    assert await listed(http, created_after=before, created_before=later) == [failed, *ids[::-1]]
    assert await listed(http, created_after=later) == []
    assert await listed(http, created_before=before) == []
    # every filter at once, as the console's logs page sends them
    both = {"metadata[team]": "a", "metadata[env]": "prod", "status": "completed"}
    assert await listed(http, **both) == [ids[0]]
    assert await listed(http, **both, created_after=before) == [ids[0]]
    assert await listed(http, **both, created_before=later) == [ids[0]]
    assert await listed(http, **both, created_after=before, created_before=later) == [ids[0]]


async def test_pages_walk_the_matches(
    http: httpx2.AsyncClient, client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    ids = [
        (
            await client.responses.create(
                model=backend.model, input="Hi", metadata={"n": str(n % 2)}
            )
        ).id
        for n in range(7)
    ]
    odd = ids[1::2]
    walked: list[str] = []
    after: str | None = None
    while True:
        params = {"metadata[n]": "1", "limit": 2, "order": "asc"} | (
            {"after": after} if after else {}
        )
        page = (await http.get("/responses", params=params)).json()
        walked += [r["id"] for r in page["data"]]
        if not page["has_more"]:
            break
        after = page["last_id"]
    assert walked == odd


@pytest.mark.parametrize(
    ("params", "param"),
    [
        ({"status": "done"}, "status"),
        ({"created_after": "yesterday"}, "created_after"),
        ({"created_before": "1.5"}, "created_before"),
        ({"created_after": "-1"}, "created_after"),
        ({"metadata[]": "x"}, "metadata[]"),
        ({"metadata[k]": "v" * 513}, "metadata[k]"),
        ({f"metadata[k{n}]": "v" for n in range(17)}, "metadata"),
    ],
)
async def test_bad_filters_are_a_400_naming_the_param(
    http: httpx2.AsyncClient, params: dict[str, str], param: str
) -> None:
    reply = await http.get("/responses", params=params)
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert (error["type"], error["param"], error["code"]) == (
        "invalid_request_error",
        param,
        "invalid_value",
    )


async def test_filters_never_show_another_projects_responses(
    alpha: Tenant, beta: Tenant, backend: FakeBackend
) -> None:
    theirs = await alpha.client.responses.create(
        model=backend.model, input="Hi", metadata={"team": "a"}
    )
    mine = await beta.client.responses.create(
        model=backend.model, input="Hi", metadata={"team": "a"}
    )
    filters = {"metadata[team]": "a", "status": "completed", "created_after": 0}
    for tenant, own in ((alpha, theirs), (beta, mine)):
        reply = await tenant.client.get(
            "/responses", cast_to=httpx2.Response, options={"params": filters}
        )
        assert [r["id"] for r in reply.json()["data"]] == [own.id]
