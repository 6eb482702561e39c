"""Searching vector stores: modes, query lists, rewriting, bounds, thresholds, filters, and the
service's search over several stores (the one the file_search tool uses)."""

from __future__ import annotations

from typing import Any

import httpx2
import openai
import pytest
from starlette.applications import Starlette

from agentloom.api.filters import ComparisonFilter
from agentloom.errors import NotFoundError
from agentloom.retrieval.index import Weights
from agentloom.storage import schema
from tests.server.vector_support import execute, runtime, upload

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

DOCS = {
    "kettle.txt": "The Zephyr kettle boils a litre of water in ninety seconds.",
    "cake.md": "Lemon cake needs four eggs, two lemons and a cup of sugar.",
    "bike.txt": "Pump the bicycle tyres to four bar before a long ride.",
}
ATTRIBUTES: dict[str, dict[str, str | float | bool]] = {
    "kettle.txt": {"author": "ann", "year": 2021, "draft": False, "date": "2021-05-01"},
    "cake.md": {"author": "bob", "year": 2023, "draft": True, "date": "2023-01-15"},
    "bike.txt": {"author": "cy", "year": 2024, "draft": False},
}


async def _store(client: openai.AsyncOpenAI) -> tuple[str, dict[str, str]]:
    """A store holding ``DOCS`` with their ``ATTRIBUTES``; also the file ids by name."""
    store = await client.vector_stores.create(name="docs")
    ids: dict[str, str] = {}
    for name, text in DOCS.items():
        ids[name] = await upload(client, name, text)
        done = await client.vector_stores.files.create_and_poll(
            file_id=ids[name], vector_store_id=store.id, attributes=ATTRIBUTES[name]
        )
        assert done.status == "completed", done.last_error
    return store.id, ids


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
async def test_each_search_mode_finds_the_matching_file_first(
    client: openai.AsyncOpenAI, mode: str
) -> None:
    store, ids = await _store(client)

    found = await client.vector_stores.search(
        store, query="kettle boils water", extra_body={"search_mode": mode}
    )

    top = found.data[0]
    assert (top.file_id, top.filename) == (ids["kettle.txt"], "kettle.txt")
    assert 0 < top.score <= 1
    assert top.content[0].type == "text"
    assert "ninety seconds" in top.content[0].text
    assert top.attributes == ATTRIBUTES["kettle.txt"]
    assert [r.score for r in found.data] == sorted((r.score for r in found.data), reverse=True)


async def test_keyword_search_returns_only_chunks_with_the_words(
    client: openai.AsyncOpenAI,
) -> None:
    store, ids = await _store(client)

    found = await client.vector_stores.search(
        store, query="lemons", extra_body={"search_mode": "keyword"}
    )
    nothing = await client.vector_stores.search(
        store, query="volcano", extra_body={"search_mode": "keyword"}
    )

    assert [r.file_id for r in found.data] == [ids["cake.md"]]
    assert nothing.data == []


async def test_a_query_list_finds_what_each_query_finds(client: openai.AsyncOpenAI) -> None:
    store, ids = await _store(client)

    found = await client.vector_stores.search(
        store, query=["kettle water", "bicycle tyres"], extra_body={"search_mode": "keyword"}
    )

    assert {r.file_id for r in found.data} == {ids["kettle.txt"], ids["bike.txt"]}


async def test_rewrite_query_searches_the_rewritten_query(http: httpx2.AsyncClient) -> None:
    store = (await http.post("/vector_stores", json={"name": "docs"})).json()
    path = f"/vector_stores/{store['id']}/search"
    question = "What is the return policy?"

    rewritten = (await http.post(path, json={"query": question, "rewrite_query": True})).json()
    verbatim = (await http.post(path, json={"query": [question, "Hi"]})).json()

    assert rewritten["search_query"] == ["return policy"]
    assert verbatim["search_query"] == [question, "Hi"]


NO_WEIGHTS = {"embedding_weight": 0, "text_weight": 0}


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"query": "x", "max_num_results": 0}, "max_num_results"),
        ({"query": "x", "max_num_results": 51}, "max_num_results"),
        ({"query": ""}, "query"),
        ({"query": []}, "query"),
        ({}, "query"),
        ({"query": "x", "search_mode": "fuzzy"}, "search_mode"),
        ({"query": "x", "ranking_options": {"score_threshold": 1.5}}, "ranking_options"),
        ({"query": "x", "ranking_options": {"hybrid_search": NO_WEIGHTS}}, "ranking_options"),
        ({"query": "x", "filters": {"type": "in", "key": "k", "value": "one"}}, "filters"),
        ({"query": "x", "filters": {"type": "like", "key": "k", "value": "v"}}, "filters"),
    ],
)
async def test_bad_searches_are_400s(http: httpx2.AsyncClient, body: Any, param: str) -> None:
    store = (await http.post("/vector_stores", json={"name": "docs"})).json()

    reply = await http.post(f"/vector_stores/{store['id']}/search", json=body)

    assert reply.status_code == 400
    assert reply.json()["error"]["param"].startswith(param)


async def test_max_num_results_caps_the_results(client: openai.AsyncOpenAI) -> None:
    store, _ = await _store(client)

    one = await client.vector_stores.search(store, query="the", max_num_results=1)
    all_of_them = await client.vector_stores.search(store, query="the", max_num_results=50)

    assert len(one.data) == 1
    assert len(all_of_them.data) == len(DOCS)


async def test_score_threshold_drops_weaker_results(client: openai.AsyncOpenAI) -> None:
    store, _ = await _store(client)
    query = "kettle water cake"
    every = await client.vector_stores.search(
        store, query=query, extra_body={"search_mode": "vector"}
    )
    scores = [r.score for r in every.data]
    assert len(set(scores)) > 1
    threshold = (scores[0] + scores[-1]) / 2

    kept = await client.vector_stores.search(
        store,
        query=query,
        ranking_options={"score_threshold": threshold},
        extra_body={"search_mode": "vector"},
    )

    assert [r.score for r in kept.data] == [s for s in scores if s >= threshold]


TEXT_ONLY: Any = {"hybrid_search": {"embedding_weight": 0, "text_weight": 1}}  # our extension


async def test_hybrid_weights_can_leave_one_side_out(client: openai.AsyncOpenAI) -> None:
    store, ids = await _store(client)
    query = "lemons"

    text_only = await client.vector_stores.search(
        store,
        query=query,
        ranking_options=TEXT_ONLY,
    )

    # the embedding side adds nothing: only the chunk with the word scores above 0
    assert [r.file_id for r in text_only.data if r.score > 0] == [ids["cake.md"]]


FILTERS: list[tuple[dict[str, Any], set[str]]] = [
    ({"type": "eq", "key": "author", "value": "ann"}, {"kettle.txt"}),
    ({"type": "eq", "key": "draft", "value": True}, {"cake.md"}),
    ({"type": "ne", "key": "author", "value": "ann"}, {"cake.md", "bike.txt"}),
    ({"type": "gt", "key": "year", "value": 2023}, {"bike.txt"}),
    ({"type": "gte", "key": "year", "value": 2023}, {"cake.md", "bike.txt"}),
    ({"type": "lt", "key": "year", "value": 2023}, {"kettle.txt"}),
    ({"type": "lte", "key": "year", "value": 2023}, {"kettle.txt", "cake.md"}),
    ({"type": "lt", "key": "date", "value": "2022-01-01"}, {"kettle.txt"}),
    ({"type": "in", "key": "author", "value": ["ann", "cy"]}, {"kettle.txt", "bike.txt"}),
    ({"type": "nin", "key": "year", "value": [2021, 2024]}, {"cake.md"}),
    ({"type": "eq", "key": "missing", "value": "x"}, set()),
    (
        {
            "type": "and",
            "filters": [
                {"type": "eq", "key": "draft", "value": False},
                {"type": "gte", "key": "year", "value": 2022},
            ],
        },
        {"bike.txt"},
    ),
    (
        {
            "type": "or",
            "filters": [
                {"type": "eq", "key": "author", "value": "bob"},
                {
                    "type": "and",
                    "filters": [
                        {"type": "eq", "key": "draft", "value": False},
                        {"type": "lt", "key": "year", "value": 2022},
                    ],
                },
            ],
        },
        {"cake.md", "kettle.txt"},
    ),
]


async def test_every_filter_operator_and_nesting(client: openai.AsyncOpenAI) -> None:
    await _each_selects(client, FILTERS)


async def _each_selects(
    client: openai.AsyncOpenAI, cases: list[tuple[dict[str, Any], set[str]]]
) -> None:
    """Each filter of ``cases`` finds exactly the files named beside it."""
    store, ids = await _store(client)
    names = {file_id: name for name, file_id in ids.items()}

    for filters, expected in cases:
        found = await client.vector_stores.search(
            store,
            query="the a of",
            filters=filters,  # type: ignore[arg-type]
            max_num_results=50,
        )
        assert {names[r.file_id] for r in found.data} == expected, filters


SHORTHAND: list[tuple[dict[str, Any], set[str]]] = [
    ({"author": {"eq": "ann"}}, {"kettle.txt"}),
    ({"draft": {"ne": True}}, {"kettle.txt", "bike.txt"}),
    ({"year": {"gt": 2021, "lte": 2023}}, {"cake.md"}),
    ({"year": {"gte": 2023}, "draft": {"eq": False}}, {"bike.txt"}),
    ({"date": {"gte": "2022-01-01"}}, {"cake.md"}),
    ({"date": {"lt": "2022-01-01"}}, {"kettle.txt"}),
    ({"author": {"in": ["ann", "cy"]}}, {"kettle.txt", "bike.txt"}),
    ({"year": {"nin": [2021, 2024]}}, {"cake.md"}),
    ({"missing": {"eq": "x"}}, set()),
]


async def test_llama_stack_shorthand_filters_select_as_their_openai_form(
    client: openai.AsyncOpenAI,
) -> None:
    await _each_selects(client, SHORTHAND)


@pytest.mark.parametrize(
    ("filters", "says"),
    [
        ({"author": {"like": "a%"}}, "unknown filter operator 'like' on 'author'"),
        ({"author": {"eq": "ann", "$regex": "a"}}, "unknown filter operator '$regex' on 'author'"),
        ({"author": "ann"}, "the shorthand filter on 'author' needs {operator: value}"),
        ({"author": {}}, "the shorthand filter on 'author' needs {operator: value}"),
        ({"year": {"in": 2021}}, """'year': {"in": ...}: a 'in' filter needs a list value"""),
        ({}, "this one has no condition"),
    ],
)
async def test_bad_shorthand_filters_are_400s_naming_the_problem(
    client: openai.AsyncOpenAI, filters: dict[str, Any], says: str
) -> None:
    store = await client.vector_stores.create(name="docs")

    with pytest.raises(openai.BadRequestError) as caught:
        await client.vector_stores.search(store.id, query="x", filters=filters)  # type: ignore[arg-type]

    error: Any = caught.value.body
    assert error["param"] == "filters"
    assert error["type"] == "invalid_request_error"
    assert says in error["message"]


async def test_rank_fields_score_ranks_by_score(client: openai.AsyncOpenAI) -> None:
    store, _ = await _store(client)
    ranked: Any = {"rank_fields": ["score"], "score_threshold": 0.0}

    plain = await client.vector_stores.search(store, query="kettle water", max_num_results=50)
    by_score = await client.vector_stores.search(
        store, query="kettle water", max_num_results=50, ranking_options=ranked
    )

    assert by_score.model_dump() == plain.model_dump()
    assert [r.score for r in by_score.data] == sorted((r.score for r in plain.data), reverse=True)


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        (["created_at"], "'created_at' is not a field they can be ranked by"),
        (["score", "year"], "'year' is not a field they can be ranked by"),
        ([], "at least 1 item"),
    ],
)
async def test_rank_fields_other_than_score_are_refused_by_name(
    http: httpx2.AsyncClient, fields: list[str], says: str
) -> None:
    store = (await http.post("/vector_stores", json={"name": "docs"})).json()

    reply = await http.post(
        f"/vector_stores/{store['id']}/search",
        json={"query": "x", "ranking_options": {"rank_fields": fields}},
    )

    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["param"] == "ranking_options.rank_fields"
    assert says in error["message"]


async def test_the_service_searches_several_stores_and_fuses_them(
    app: Starlette, client: openai.AsyncOpenAI
) -> None:
    first = await client.vector_stores.create(name="one")
    second = await client.vector_stores.create(name="two")
    kettle = await upload(client, "kettle.txt", DOCS["kettle.txt"])
    cake = await upload(client, "cake.md", DOCS["cake.md"])
    await client.vector_stores.files.create_and_poll(file_id=kettle, vector_store_id=first.id)
    await client.vector_stores.files.create_and_poll(
        file_id=cake, vector_store_id=second.id, attributes={"kind": "recipe"}
    )
    service = runtime(app).vector_stores

    results = await service.search(
        [first.id, second.id], ["kettle water", "lemon cake"], limit=5, mode="keyword"
    )
    filtered = await service.search(
        [first.id, second.id],
        ["kettle water", "lemon cake"],
        limit=5,
        filters=ComparisonFilter(type="eq", key="kind", value="recipe"),
        weights=Weights(embedding=1.0, text=2.0),
    )

    assert {r.file_id for r in results} == {kettle, cake}
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    assert {r.filename for r in results} == {"kettle.txt", "cake.md"}
    assert [(r.file_id, r.attributes) for r in filtered] == [(cake, {"kind": "recipe"})]
    with pytest.raises(NotFoundError) as missing:
        await service.search([first.id, "vs_missing"], ["kettle"], limit=5)
    assert missing.value.param == "vector_store_ids"
    await service.require([first.id, second.id], param="tools[0].vector_store_ids")
    with pytest.raises(NotFoundError) as required:
        await service.require([first.id, "vs_missing"], param="tools[0].vector_store_ids")
    assert required.value.param == "tools[0].vector_store_ids"


async def test_a_store_embedded_by_another_model_refuses_vector_search(
    client: openai.AsyncOpenAI, app: Starlette
) -> None:
    store, ids = await _store(client)
    table = schema.vector_stores
    await execute(app, table.update().where(table.c.id == store).values(embedder="other:model"))

    with pytest.raises(openai.ConflictError) as refused:
        await client.vector_stores.search(store, query="kettle")
    keyword = await client.vector_stores.search(
        store, query="kettle", extra_body={"search_mode": "keyword"}
    )

    assert refused.value.body["code"] == "embedding_model_mismatch"  # type: ignore[index]
    assert [r.file_id for r in keyword.data] == [ids["kettle.txt"]]
