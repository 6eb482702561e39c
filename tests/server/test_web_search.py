"""The web_search tool in responses: the model searches, the server asks a (fake, real-HTTP)
search provider, streams the call's events, and the answer carries url citations."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2
import openai
import pytest
from openai.types.responses import Response as SDKResponse

from agentloom.config import SearchSourceSettings, Settings, WebSearchSettings
from agentloom.inference.scripted import ScriptedModel, text, tool_call
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import make_settings
from tests.tools.search_fakes import PAGES, FakeSearch, Page, running_fake

KEY = "brave-secret-789"
TOOL: dict[str, Any] = {"type": "web_search"}


@pytest.fixture
async def live(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeSearch]:
    monkeypatch.setenv("TEST_BRAVE_KEY", KEY)
    async with running_fake() as fake:
        yield fake


@pytest.fixture
async def offline() -> AsyncIterator[FakeSearch]:
    async with running_fake() as fake:
        yield fake


@pytest.fixture
def settings(
    backend: FakeBackend, database_url: str, live: FakeSearch, offline: FakeSearch
) -> Settings:
    web = WebSearchSettings(
        live=SearchSourceSettings(
            provider="brave", base_url=live.base_url, api_key_env="TEST_BRAVE_KEY", timeout=2
        ),
        offline=SearchSourceSettings(provider="searxng", base_url=offline.base_url, timeout=2),
        max_results=4,
    )
    return make_settings(backend, database_url).model_copy(update={"web_search": web})


def _search(query: str) -> Any:
    return tool_call("web_search", {"query": query})


async def test_the_model_searches_and_the_answer_cites_the_page(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel, live: FakeSearch
) -> None:
    scripted.add_turn(_search("zephyr kettle speed"))
    answer = "It boils a litre in ninety seconds [1]."
    scripted.add_turn(answer)

    reply = await http.post(
        "/responses",
        json={
            "model": backend.model,
            "input": "How fast is the Zephyr kettle?",
            "tools": [TOOL],
            "include": ["web_search_call.action.sources"],
        },
    )

    assert reply.status_code == 200
    response = SDKResponse.model_validate(reply.json(), strict=True)
    call, message = response.output
    assert call.type == "web_search_call"
    assert call.id.startswith("ws_")
    assert call.status == "completed"
    assert call.action.type == "search"
    assert call.action.query == "zephyr kettle speed"
    assert [s.url for s in call.action.sources or []] == [p.url for p in PAGES]
    assert message.type == "message"
    part = message.content[0]
    assert part.type == "output_text"
    (citation,) = part.annotations
    assert citation.type == "url_citation"
    assert citation.url == PAGES[0].url
    assert citation.title == PAGES[0].title
    assert (citation.start_index, citation.end_index) == (0, len(answer) - 1)
    told = backend.requests[1]["messages"][-1]
    assert told["role"] == "tool"
    assert f"[1] {PAGES[0].title} ({PAGES[0].url})" in told["content"]
    assert PAGES[0].snippet in told["content"]
    assert live.received[0].params["q"] == "zephyr kettle speed"
    assert live.received[0].params["count"] == "4"
    offered = backend.requests[0]["tools"][0]["function"]
    assert offered["name"] == "web_search"


async def test_sources_are_left_out_unless_included(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(_search("kettle"))
    scripted.add_turn("Fast.")

    response = await client.responses.create(model=backend.model, input="?", tools=[TOOL])

    call = response.output[0]
    assert call.type == "web_search_call"
    assert call.action.type == "search"
    assert call.action.sources is None


async def test_streamed_web_search_events_in_order(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(_search("kettle"))
    scripted.add_turn(text("Ninety seconds [1].", chunk_size=4))

    stream = await client.responses.create(
        model=backend.model, input="?", tools=[{"type": "web_search_preview"}], stream=True
    )
    events = [event async for event in stream]

    kinds = [e.type for e in events]
    start = kinds.index("response.web_search_call.in_progress")
    assert kinds[start - 1 : start + 4] == [
        "response.output_item.added",
        "response.web_search_call.in_progress",
        "response.web_search_call.searching",
        "response.web_search_call.completed",
        "response.output_item.done",
    ]
    added = kinds.index("response.output_text.annotation.added")
    assert events[added].annotation.type == "url_citation"  # type: ignore[union-attr]
    final = events[-1]
    assert final.type == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    stored = await client.responses.retrieve(final.response.id)
    assert stored.output[0].type == "web_search_call"
    assert stored.output[1].content[0].annotations  # type: ignore[union-attr]


async def test_filters_and_location_reach_the_provider(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel, live: FakeSearch
) -> None:
    scripted.add_turn(_search("kettle"))
    scripted.add_turn("Done.")

    response = await client.responses.create(
        model=backend.model,
        input="?",
        tools=[
            {
                "type": "web_search_2025_08_26",
                "filters": {"allowed_domains": ["https://Example.com/"]},
                "user_location": {"type": "approximate", "country": "DE"},
                "search_context_size": "low",
            }
        ],
        include=["web_search_call.action.sources"],
    )

    (seen,) = live.received
    assert seen.params == {"q": "kettle site:example.com", "count": "2", "country": "DE"}
    sources = response.output[0].action.sources  # type: ignore[union-attr]
    assert [s.url for s in sources or []] == [PAGES[0].url]  # example.org is not allowed


async def test_provider_failure_fails_the_call_and_the_model_is_told(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel, live: FakeSearch
) -> None:
    live.status = 500
    scripted.add_turn(_search("kettle"))
    scripted.add_turn("Search is down.")

    response = await client.responses.create(model=backend.model, input="?", tools=[TOOL])

    assert response.status == "completed"
    call, message = response.output
    assert call.status == "failed"  # type: ignore[union-attr]
    assert message.content[0].annotations == []  # type: ignore[union-attr]
    told = backend.requests[1]["messages"][-1]["content"]
    assert told.startswith("Error: the web search failed: the Brave search API failed (500)")
    assert KEY not in told


async def test_no_external_web_access_searches_only_the_offline_source(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    live: FakeSearch,
    offline: FakeSearch,
) -> None:
    scripted.add_turn(_search("kettle"))
    scripted.add_turn("Ninety seconds [1].")

    response = await client.responses.create(
        model=backend.model,
        input="?",
        tools=[{"type": "web_search", "external_web_access": False}],
    )

    assert live.received == []
    assert [r.params["format"] for r in offline.received] == ["json"]
    assert response.output[0].status == "completed"  # type: ignore[union-attr]
    assert response.output[1].content[0].annotations[0].type == "url_citation"  # type: ignore[union-attr]


async def test_bad_arguments_fail_the_call(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel, live: FakeSearch
) -> None:
    scripted.add_turn(tool_call("web_search", "{oops"))
    scripted.add_turn("Sorry.")

    response = await client.responses.create(model=backend.model, input="?", tools=[TOOL])

    assert response.output[0].status == "failed"  # type: ignore[union-attr]
    assert "not valid JSON" in backend.requests[1]["messages"][-1]["content"]
    assert live.received == []


async def test_a_later_turn_sees_the_search(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(_search("kettle"))
    scripted.add_turn("Ninety seconds [1].")
    scripted.add_turn("As I said.")
    first = await client.responses.create(
        model=backend.model,
        input="?",
        tools=[TOOL],
        include=["web_search_call.action.sources"],
    )

    await client.responses.create(model=backend.model, input="Sure?", previous_response_id=first.id)

    messages = backend.requests[2]["messages"]
    call = next(m for m in messages if m.get("tool_calls"))
    assert call["tool_calls"][0]["function"]["name"] == "web_search"
    told = next(m for m in messages if m["role"] == "tool")
    assert PAGES[0].url in told["content"]


async def test_codex_style_web_search_items_are_accepted_as_input(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Fine.")

    response = await client.responses.create(
        model=backend.model,
        input=[
            {"role": "user", "content": "Find kettles"},
            {"type": "web_search_call", "action": {"type": "search", "query": "kettles"}},
            {"role": "user", "content": "Thanks"},
        ],
        tools=[{"type": "web_search", "external_web_access": False}],
    )

    assert response.status == "completed"
    items = await client.responses.input_items.list(response.id)
    searched = [i for i in items.data if i.type == "web_search_call"]
    assert searched[0].id.startswith("ws_")  # type: ignore[union-attr]


async def test_max_results_is_the_count_asked_and_the_most_a_call_returns(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel, live: FakeSearch
) -> None:
    live.per_query["other kettles"] = (Page("https://b.example.com/", "B", "Another kettle."),)
    scripted.add_turn(tool_call("web_search", {"queries": ["kettle", "other kettles"]}))
    scripted.add_turn("Done.")
    tool: Any = {  # fields of Llama Stack's the SDK's type lacks
        "type": "web_search",
        "max_results": 1,
        "search_engine": "brave",
        "search_context_size": "high",  # 8 results without max_results
    }

    response = await client.responses.create(
        model=backend.model,
        input="?",
        tools=[tool],
        include=["web_search_call.action.sources"],
    )

    assert [r.params["count"] for r in live.received] == ["1", "1"]
    sources = response.output[0].action.sources  # type: ignore[union-attr]
    assert [s.url for s in sources or []] == [PAGES[0].url]  # the second query's page is cut
    echoed = response.tools[0].model_dump()
    assert (echoed["max_results"], echoed["search_engine"]) == (1, "brave")


async def test_without_max_results_the_context_size_sets_the_count(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel, live: FakeSearch
) -> None:
    scripted.add_turn(_search("kettle"))
    scripted.add_turn("Done.")

    await client.responses.create(
        model=backend.model,
        input="?",
        tools=[{"type": "web_search", "search_context_size": "high"}],
    )

    assert live.received[0].params["count"] == "8"  # twice the configured 4


async def test_the_offline_source_is_the_engine_without_external_web_access(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    live: FakeSearch,
    offline: FakeSearch,
) -> None:
    scripted.add_turn(_search("kettle"))
    scripted.add_turn("Done.")
    tool: Any = {
        "type": "web_search",
        "external_web_access": False,
        "search_engine": "SearXNG",
        "max_results": 1,
    }

    response = await client.responses.create(
        model=backend.model, input="?", tools=[tool], include=["web_search_call.action.sources"]
    )

    assert live.received == []
    assert len(offline.received) == 1
    sources = response.output[0].action.sources  # type: ignore[union-attr]
    assert [s.url for s in sources or []] == [PAGES[0].url]  # SearXNG's page cut to one


@pytest.mark.parametrize(
    ("tool", "says"),
    [
        ({"search_engine": "google"}, "provider for live web searches is 'brave'"),
        (
            {"search_engine": "brave", "external_web_access": False},
            "provider for calls with external_web_access: false is 'searxng'",
        ),
    ],
)
async def test_a_search_engine_other_than_the_provider_is_a_400(
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    live: FakeSearch,
    tool: dict[str, Any],
    says: str,
) -> None:
    reply = await http.post(
        "/responses",
        json={"model": backend.model, "input": "?", "tools": [{"type": "web_search", **tool}]},
    )

    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["param"] == "tools[0].search_engine"
    assert error["type"] == "invalid_request_error"
    assert f"search_engine '{tool['search_engine']}' cannot be used" in error["message"]
    assert says in error["message"]
    assert backend.requests == []
    assert live.received == []


@pytest.mark.parametrize(
    ("field", "value"),
    [("max_results", 0), ("max_results", 21), ("max_results", "ten"), ("search_engine", "")],
)
async def test_bad_max_results_and_search_engine_are_400s(
    http: httpx2.AsyncClient, backend: FakeBackend, field: str, value: object
) -> None:
    reply = await http.post(
        "/responses",
        json={
            "model": backend.model,
            "input": "?",
            "tools": [{"type": "web_search", field: value}],
        },
    )

    assert reply.status_code == 400
    assert reply.json()["error"]["param"] == f"tools[0].{field}"


class TestWithoutAProvider:
    @pytest.fixture
    def settings(self, backend: FakeBackend, database_url: str) -> Settings:
        return make_settings(backend, database_url)

    @pytest.mark.parametrize("tool", [TOOL, {"type": "web_search", "external_web_access": False}])
    async def test_the_tool_is_accepted_and_the_model_told_it_is_unavailable(
        self,
        client: openai.AsyncOpenAI,
        backend: FakeBackend,
        scripted: ScriptedModel,
        tool: dict[str, Any],
    ) -> None:
        scripted.add_turn(_search("kettle"))
        scripted.add_turn("I cannot search.")

        response = await client.responses.create(model=backend.model, input="?", tools=[tool])

        assert response.status == "completed"
        assert response.output[0].status == "failed"  # type: ignore[union-attr]
        told = backend.requests[1]["messages"][-1]["content"]
        assert "web search is unavailable" in told

    async def test_a_search_engine_is_a_400_when_there_is_none(
        self, http: httpx2.AsyncClient, backend: FakeBackend
    ) -> None:
        tool = {"type": "web_search", "search_engine": "brave"}

        reply = await http.post(
            "/responses", json={"model": backend.model, "input": "?", "tools": [tool]}
        )

        assert reply.status_code == 400
        error = reply.json()["error"]
        assert error["param"] == "tools[0].search_engine"
        assert "has no web search provider for live web searches" in error["message"]
        assert backend.requests == []
