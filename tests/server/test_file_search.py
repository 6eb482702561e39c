"""The file_search tool in responses: the model searches, the server runs the search over real
vector stores, streams the call's events, and the answer carries file citations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from openai.types.responses import Response as SDKResponse

from agentloom.config import VectorStoreSettings
from agentloom.inference.scripted import ScriptedModel, text, tool_call
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import make_settings
from tests.server.vector_support import serving

HANDBOOK = (
    "The Zephyr X2 kettle boils a litre of water in ninety seconds.\n\n"
    "Its warranty covers the heating element for five years from purchase."
)
RECIPES = "Lemon cake needs four eggs, two lemons and a cup of sugar. Bake it for forty minutes."


async def _store(client: openai.AsyncOpenAI, files: dict[str, str], **attrs: Any) -> str:
    store = await client.vector_stores.create(name="docs")
    for name, body in files.items():
        uploaded = await client.files.create(file=(name, body.encode()), purpose="assistants")
        done = await client.vector_stores.files.create_and_poll(
            file_id=uploaded.id, vector_store_id=store.id, attributes=attrs.get(name) or None
        )
        assert done.status == "completed", done.last_error
    return store.id


def _search(*queries: str) -> Any:
    return tool_call("file_search", {"queries": list(queries)})


async def test_the_model_searches_and_the_answer_cites_the_file(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    store = await _store(client, {"handbook.md": HANDBOOK, "recipes.txt": RECIPES})
    scripted.add_turn(_search("kettle warranty"))
    scripted.add_turn("The heating element is covered for five years [1].")

    response = await client.responses.create(
        model=backend.model,
        input="How long is the kettle's warranty?",
        tools=[{"type": "file_search", "vector_store_ids": [store]}],
        include=["file_search_call.results"],
    )

    call, message = response.output
    assert call.type == "file_search_call"
    assert call.status == "completed"
    assert call.queries == ["kettle warranty"]
    assert call.results
    assert call.results[0].filename == "handbook.md"
    assert "five years" in (call.results[0].text or "")
    assert message.type == "message"
    part = message.content[0]
    assert part.type == "output_text"
    citation = part.annotations[0]
    assert citation.type == "file_citation"
    assert citation.filename == "handbook.md"
    assert citation.index == part.text.index("[1]")
    told = backend.requests[1]["messages"][-1]
    assert told["role"] == "tool"
    assert "[1] handbook.md" in told["content"]
    assert "five years" in told["content"]


async def test_results_are_left_out_unless_included(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    store = await _store(client, {"handbook.md": HANDBOOK})
    scripted.add_turn(_search("warranty"))
    scripted.add_turn("Five years.")

    response = await client.responses.create(
        model=backend.model,
        input="Warranty?",
        tools=[{"type": "file_search", "vector_store_ids": [store]}],
    )

    call = response.output[0]
    assert call.type == "file_search_call"
    assert call.results is None


async def test_citations_without_markers_come_from_what_the_answer_draws_on(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    store = await _store(client, {"handbook.md": HANDBOOK, "recipes.txt": RECIPES})
    scripted.add_turn(_search("kettle boil time", "lemon cake"))
    answer = (
        "The Zephyr kettle boils a litre of water in ninety seconds. "
        "A lemon cake bakes for forty minutes with four eggs. Enjoy!"
    )
    scripted.add_turn(answer)

    response = await client.responses.create(
        model=backend.model,
        input="Kettle speed and cake time?",
        tools=[{"type": "file_search", "vector_store_ids": [store]}],
    )

    part = response.output[-1].content[0]  # type: ignore[union-attr]
    cited = [(a.filename, a.index) for a in part.annotations]  # type: ignore[union-attr]
    assert cited == [
        ("handbook.md", answer.index("seconds.") + len("seconds.")),
        ("recipes.txt", answer.index("eggs.") + len("eggs.")),
    ]


async def test_streamed_file_search_events_in_order(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    store = await _store(client, {"handbook.md": HANDBOOK})
    scripted.add_turn(_search("warranty"))
    scripted.add_turn(text("Five years [1].", chunk_size=4))

    stream = await client.responses.create(
        model=backend.model,
        input="Warranty?",
        tools=[{"type": "file_search", "vector_store_ids": [store]}],
        stream=True,
    )
    events = [event async for event in stream]

    kinds = [e.type for e in events]
    search = kinds.index("response.file_search_call.in_progress")
    assert kinds[search - 1] == "response.output_item.added"
    assert kinds[search : search + 4] == [
        "response.file_search_call.in_progress",
        "response.file_search_call.searching",
        "response.file_search_call.completed",
        "response.output_item.done",
    ]
    added = kinds.index("response.output_text.annotation.added")
    assert kinds[added + 1] == "response.output_text.done"
    annotation = events[added].annotation  # type: ignore[union-attr]
    assert annotation is not None
    assert annotation.filename == "handbook.md"
    final = events[-1]
    assert final.type == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    stored = await client.responses.retrieve(final.response.id)
    assert stored.output[1].content[0].annotations  # type: ignore[union-attr]


async def test_filters_and_max_num_results_reach_the_search(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    store = await _store(
        client,
        {"handbook.md": HANDBOOK, "recipes.txt": RECIPES},
        **{"handbook.md": {"kind": "manual"}, "recipes.txt": {"kind": "food"}},
    )
    scripted.add_turn(_search("five years warranty lemon cake"))
    scripted.add_turn("Done.")

    response = await client.responses.create(
        model=backend.model,
        input="?",
        tools=[
            {
                "type": "file_search",
                "vector_store_ids": [store],
                "max_num_results": 1,
                "filters": {"type": "eq", "key": "kind", "value": "food"},
            }
        ],
        include=["file_search_call.results"],
    )

    results = response.output[0].results  # type: ignore[union-attr]
    assert results is not None
    assert [r.filename for r in results] == ["recipes.txt"]
    assert results[0].attributes == {"kind": "food"}


@pytest.mark.both_databases  # the filter selects stored files by their stored attributes
async def test_llama_stack_shorthand_filters_and_rank_fields_apply(
    client: openai.AsyncOpenAI,
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    store = await _store(
        client,
        {"handbook.md": HANDBOOK, "recipes.txt": RECIPES, "old.txt": RECIPES},
        **{
            "handbook.md": {"file_name": "handbook.md", "created_at": "2024-03-01"},
            "recipes.txt": {"file_name": "recipes.txt", "created_at": "2024-06-01"},
            "old.txt": {"file_name": "recipes.txt", "created_at": "2023-12-31"},
        },
    )
    scripted.add_turn(_search("five years warranty lemon cake"))
    scripted.add_turn("Done.")
    tool = {  # as Llama Stack's reference writes it
        "type": "file_search",
        "vector_store_ids": [store],
        "filters": {"file_name": {"eq": "recipes.txt"}, "created_at": {"gte": "2024-01-01"}},
        "max_num_results": 5,
        "ranking_options": {"rank_fields": ["score"], "score_threshold": 0.0},
    }

    reply = await http.post(
        "/responses",
        json={
            "model": backend.model,
            "input": "?",
            "tools": [tool],
            "include": ["file_search_call.results"],
        },
    )

    assert reply.status_code == 200, reply.text
    response = SDKResponse.model_validate(reply.json(), strict=True)
    (found,) = response.output[0].results or []  # type: ignore[union-attr]
    assert found.filename == "recipes.txt"
    assert found.attributes == {"file_name": "recipes.txt", "created_at": "2024-06-01"}
    echoed = reply.json()["tools"][0]
    assert echoed["filters"] == {  # the shorthand, read as OpenAI's filter
        "type": "and",
        "filters": [
            {"type": "eq", "key": "file_name", "value": "recipes.txt"},
            {"type": "gte", "key": "created_at", "value": "2024-01-01"},
        ],
    }
    assert echoed["ranking_options"]["rank_fields"] == ["score"]


async def test_max_tool_calls_stops_further_searches(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    store = await _store(client, {"handbook.md": HANDBOOK})
    scripted.add_turn(_search("one"), _search("two"))
    scripted.add_turn("Answer.")

    response = await client.responses.create(
        model=backend.model,
        input="?",
        tools=[{"type": "file_search", "vector_store_ids": [store]}],
        max_tool_calls=1,
    )

    assert [item.type for item in response.output] == ["file_search_call", "message"]
    told = [m for m in backend.requests[1]["messages"] if m["role"] == "tool"]
    assert "limit of tool calls" in told[1]["content"]
    assert backend.requests[1].get("tools") in (None, [])


async def test_bad_arguments_fail_the_call_and_the_model_is_told(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    store = await _store(client, {"handbook.md": HANDBOOK})
    scripted.add_turn(tool_call("file_search", "{not json"))
    scripted.add_turn("Sorry.")

    response = await client.responses.create(
        model=backend.model,
        input="?",
        tools=[{"type": "file_search", "vector_store_ids": [store]}],
    )

    assert response.output[0].status == "failed"  # type: ignore[union-attr]
    told = backend.requests[1]["messages"][-1]
    assert told["role"] == "tool"
    assert "not valid JSON" in told["content"]


async def test_unknown_vector_store_is_a_404_before_anything_runs(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        await client.responses.create(
            model=backend.model,
            input="?",
            tools=[{"type": "file_search", "vector_store_ids": ["vs_missing"]}],
        )

    assert caught.value.body["param"] == "tools[0].vector_store_ids"  # type: ignore[index]
    assert backend.requests == []


@pytest.mark.parametrize(
    ("tool", "param"),
    [
        ({"type": "file_search", "vector_store_ids": []}, "tools[0].vector_store_ids"),
        (
            {"type": "file_search", "vector_store_ids": ["vs_1"], "max_num_results": 51},
            "tools[0].max_num_results",
        ),
        ({"type": "file_search"}, "tools[0].vector_store_ids"),
        (
            {"type": "file_search", "vector_store_ids": ["vs_1"], "filters": {"k": {"like": 1}}},
            "tools[0].filters",
        ),
        (
            {
                "type": "file_search",
                "vector_store_ids": ["vs_1"],
                "ranking_options": {"rank_fields": ["created_at"]},
            },
            "tools[0].ranking_options.rank_fields",
        ),
    ],
)
async def test_bad_file_search_tools_are_400s(
    http: httpx2.AsyncClient, backend: FakeBackend, tool: dict[str, Any], param: str
) -> None:
    reply = await http.post(
        "/responses", json={"model": backend.model, "input": "?", "tools": [tool]}
    )

    assert reply.status_code == 400
    assert reply.json()["error"]["param"] == param


async def test_an_unknown_shorthand_operator_is_named(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    tool: Any = {
        "type": "file_search",
        "vector_store_ids": ["vs_1"],
        "filters": {"file_name": {"eq": "report.pdf"}, "created_at": {"after": "2024"}},
    }

    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model=backend.model, input="?", tools=[tool])

    error: Any = caught.value.body
    assert error["param"] == "tools[0].filters"
    assert "unknown filter operator 'after' on 'created_at'" in error["message"]
    assert backend.requests == []


async def test_tool_choice_file_search_forces_the_search(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    store = await _store(client, {"handbook.md": HANDBOOK})
    scripted.add_turn(_search("warranty"))
    scripted.add_turn("Five years.")

    await client.responses.create(
        model=backend.model,
        input="?",
        tools=[{"type": "file_search", "vector_store_ids": [store]}],
        tool_choice={"type": "file_search"},
    )

    assert backend.requests[0]["tool_choice"] == {
        "type": "function",
        "function": {"name": "file_search"},
    }


async def test_a_continuation_shows_the_model_the_earlier_search(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    store = await _store(client, {"handbook.md": HANDBOOK})
    scripted.add_turn(_search("warranty"))
    scripted.add_turn("Five years [1].")
    scripted.add_turn("You are welcome.")
    tools: Any = [{"type": "file_search", "vector_store_ids": [store]}]
    first = await client.responses.create(
        model=backend.model,
        input="Warranty?",
        tools=tools,
        include=["file_search_call.results"],
    )

    await client.responses.create(
        model=backend.model, input="Thanks", previous_response_id=first.id, tools=tools
    )

    messages = backend.requests[-1]["messages"]
    calls = [m for m in messages if m["role"] == "assistant" and m.get("tool_calls")]
    assert json.loads(calls[0]["tool_calls"][0]["function"]["arguments"]) == {
        "queries": ["warranty"]
    }
    tool = next(m for m in messages if m["role"] == "tool")
    assert "five years" in tool["content"]


async def test_file_search_response_parses_strictly(
    client: openai.AsyncOpenAI,
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    store = await _store(client, {"handbook.md": HANDBOOK})
    scripted.add_turn(_search("warranty"))
    scripted.add_turn("Five years [1].")

    reply = await http.post(
        "/responses",
        json={
            "model": backend.model,
            "input": "?",
            "tools": [{"type": "file_search", "vector_store_ids": [store]}],
            "include": ["file_search_call.results"],
        },
    )

    body = reply.json()
    SDKResponse.model_validate(body, strict=True)
    assert "search_mode" not in body["tools"][0]  # agentloom's own field is echoed only if set


async def test_a_search_on_a_conversation_joins_its_items(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    store = await _store(client, {"handbook.md": HANDBOOK})
    conversation = await client.conversations.create()
    scripted.add_turn(_search("warranty"))
    scripted.add_turn("Five years [1].")
    scripted.add_turn("Ninety seconds.")
    tools: Any = [{"type": "file_search", "vector_store_ids": [store]}]

    await client.responses.create(
        model=backend.model,
        input="Warranty?",
        conversation=conversation.id,
        tools=tools,
        include=["file_search_call.results"],
    )
    await client.responses.create(
        model=backend.model, input="And boiling?", conversation=conversation.id, tools=tools
    )

    items = (await client.conversations.items.list(conversation.id, order="asc")).data
    assert [item.type for item in items] == [
        "message",
        "file_search_call",
        "message",
        "message",
        "message",
    ]
    assert items[1].results[0].filename == "handbook.md"  # type: ignore[union-attr]
    tool = next(m for m in backend.requests[-1]["messages"] if m["role"] == "tool")
    assert "five years" in tool["content"]


async def test_a_slow_embeddings_backend_fails_the_search_not_the_response(
    backend: FakeBackend, scripted: ScriptedModel, database_url: str, tmp_path: Path
) -> None:
    settings = make_settings(backend, database_url, files_directory=tmp_path)
    tuned = VectorStoreSettings(poll_after_ms=20, query_timeout=0.2)
    async with serving(settings.model_copy(update={"vector_stores": tuned})) as (_, client):
        store = await _store(client, {"handbook.md": HANDBOOK})
        scripted.add_turn(_search("warranty"))
        scripted.add_turn("I could not search.")
        backend.embedding_delays[:] = [3.0, 3.0]  # the next two query embeddings stall

        with pytest.raises(openai.APIStatusError) as caught:
            await client.vector_stores.search(store, query="warranty")
        response = await client.responses.create(
            model=backend.model,
            input="Warranty?",
            tools=[{"type": "file_search", "vector_store_ids": [store]}],
        )

    assert caught.value.status_code == 504
    assert response.status == "completed"
    assert response.output[0].status == "failed"  # type: ignore[union-attr]
    told = backend.requests[1]["messages"][-1]
    assert "did not embed the query within 0.2 s" in told["content"]
