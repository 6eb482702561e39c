"""The OpenAI Agents SDK (``agents``) running an agent whose model is served by agentloom."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import openai
import pytest
from agents import (
    Agent,
    FileSearchTool,
    OpenAIConversationsSession,
    OpenAIResponsesModel,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from openai.types.responses import ResponseTextDeltaEvent

from agentloom.inference.scripted import ScriptedModel, text, tool_call
from agentloom.testing.backend import FakeBackend
from tests.e2e.support import received

CALLED: list[str] = []


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city's name.
    """
    CALLED.append(city)
    return f"Sunny in {city}, 21C"


@pytest.fixture(autouse=True)
def _no_tracing() -> Iterator[None]:
    """Nothing goes to OpenAI's tracing endpoint."""
    set_tracing_disabled(True)
    CALLED.clear()
    yield
    CALLED.clear()


class Recorder:
    """The JSON bodies the SDK sent to agentloom's ``POST /responses``."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    async def __call__(self, request: httpx2.Request) -> None:
        if request.method == "POST" and request.url.path.endswith("/responses"):
            self.bodies.append(json.loads(request.content))


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
async def agent(
    live_url: str, backend: FakeBackend, recorder: Recorder
) -> AsyncIterator[Agent[Any]]:
    async with (
        httpx2.AsyncClient(event_hooks={"request": [recorder]}, timeout=10.0) as http,
        openai.AsyncOpenAI(
            base_url=live_url, api_key="unused", max_retries=0, http_client=http
        ) as sdk,
    ):
        model = OpenAIResponsesModel(model=backend.model, openai_client=sdk)
        yield Agent(
            name="weather",
            instructions="Answer weather questions with the tool.",
            model=model,
            tools=[get_weather],
        )


def _script_tool_then_answer(scripted: ScriptedModel) -> None:
    scripted.add_turn(tool_call("get_weather", {"city": "Paris"}, "call_w1"))
    scripted.add_turn(text("It is sunny in Paris.", chunk_size=6))


def _tool_result_message(request: dict[str, Any]) -> dict[str, Any]:
    tools: list[dict[str, Any]] = [m for m in request["messages"] if m["role"] == "tool"]
    assert len(tools) == 1, request["messages"]
    return tools[0]


def _assert_backend_saw_the_whole_exchange(backend: FakeBackend) -> None:
    assert len(backend.requests) == 2
    first, second = received(backend)
    assert first["messages"][0]["role"] in ("system", "developer")
    assert first["messages"][-1] == {"role": "user", "content": "Weather in Paris?"}
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather"]
    roles = [m["role"] for m in second["messages"]]
    assert roles[-3:] == ["user", "assistant", "tool"]
    call = second["messages"][-2]["tool_calls"][0]
    assert call["id"] == "call_w1"
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}
    result = _tool_result_message(second)
    assert result["tool_call_id"] == "call_w1"
    assert "Sunny in Paris, 21C" in json.dumps(result["content"])


async def test_runner_replays_the_history_with_the_tool_result(
    scripted: ScriptedModel,
    backend: FakeBackend,
    agent: Agent[Any],
    recorder: Recorder,
    live_client: openai.AsyncOpenAI,
) -> None:
    _script_tool_then_answer(scripted)

    result = await Runner.run(agent, "Weather in Paris?")

    assert result.final_output == "It is sunny in Paris."
    assert CALLED == ["Paris"]
    _assert_backend_saw_the_whole_exchange(backend)
    assert len(recorder.bodies) == 2
    replay = recorder.bodies[1]
    assert replay.get("previous_response_id") is None
    assert [i.get("type") for i in replay["input"]][-2:] == [
        "function_call",
        "function_call_output",
    ]
    stored = await live_client.responses.retrieve(result.raw_responses[-1].response_id or "")
    assert stored.output_text == "It is sunny in Paris."


async def test_runner_chains_with_previous_response_id(
    scripted: ScriptedModel,
    backend: FakeBackend,
    agent: Agent[Any],
    recorder: Recorder,
    live_client: openai.AsyncOpenAI,
) -> None:
    _script_tool_then_answer(scripted)

    result = await Runner.run(agent, "Weather in Paris?", auto_previous_response_id=True)

    assert result.final_output == "It is sunny in Paris."
    first_id, second_id = (r.response_id for r in result.raw_responses)
    assert first_id is not None
    assert second_id is not None
    chained = recorder.bodies[1]
    assert chained["previous_response_id"] == first_id
    assert [i["type"] for i in chained["input"]] == ["function_call_output"]
    # agentloom rebuilt the earlier turns from storage: the backend still got the whole history.
    _assert_backend_saw_the_whole_exchange(backend)
    stored = await live_client.responses.retrieve(second_id)
    assert stored.previous_response_id == first_id
    assert stored.status == "completed"
    assert stored.output_text == "It is sunny in Paris."


async def test_run_streamed_yields_text_deltas(
    scripted: ScriptedModel, backend: FakeBackend, agent: Agent[Any]
) -> None:
    _script_tool_then_answer(scripted)

    result = Runner.run_streamed(agent, "Weather in Paris?")
    deltas: list[str] = []
    async for event in result.stream_events():
        if event.type == "raw_response_event" and isinstance(event.data, ResponseTextDeltaEvent):
            deltas.append(event.data.delta)

    assert deltas == ["It is ", "sunny ", "in Par", "is."]
    assert result.final_output == "It is sunny in Paris."
    assert CALLED == ["Paris"]
    _assert_backend_saw_the_whole_exchange(backend)


# --- conversations ---------------------------------------------------------------------------


async def test_runner_with_conversation_id_keeps_state_on_the_server(
    scripted: ScriptedModel,
    backend: FakeBackend,
    agent: Agent[Any],
    recorder: Recorder,
    live_client: openai.AsyncOpenAI,
) -> None:
    conversation = await live_client.conversations.create()
    _script_tool_then_answer(scripted)
    scripted.add_turn("You asked about Paris.")

    first = await Runner.run(agent, "Weather in Paris?", conversation_id=conversation.id)
    second = await Runner.run(agent, "Which city was it?", conversation_id=conversation.id)

    assert first.final_output == "It is sunny in Paris."
    assert second.final_output == "You asked about Paris."
    # the SDK sends only new items; agentloom supplied the rest from the conversation
    assert all(body["conversation"] == conversation.id for body in recorder.bodies)
    assert [i["type"] for i in recorder.bodies[1]["input"]] == ["function_call_output"]
    _assert_backend_saw_the_whole_exchange_then(backend, "Which city was it?")
    items = [i async for i in live_client.conversations.items.list(conversation.id, order="asc")]
    assert [i.type for i in items] == [
        "message",
        "function_call",
        "function_call_output",
        "message",
        "message",
        "message",
    ]


async def test_openai_conversations_session(
    scripted: ScriptedModel,
    backend: FakeBackend,
    agent: Agent[Any],
    live_client: openai.AsyncOpenAI,
) -> None:
    session = OpenAIConversationsSession(openai_client=live_client)
    _script_tool_then_answer(scripted)
    scripted.add_turn("You asked about Paris.")

    first = await Runner.run(agent, "Weather in Paris?", session=session)
    second = await Runner.run(agent, "Which city was it?", session=session)

    assert first.final_output == "It is sunny in Paris."
    assert second.final_output == "You asked about Paris."
    _assert_backend_saw_the_whole_exchange_then(backend, "Which city was it?")
    history = await session.get_items()
    assert [item.get("type", "message") for item in history] == [
        "message",
        "function_call",
        "function_call_output",
        "message",
        "message",
        "message",
    ]
    assert (await session.get_items(limit=1))[0]["content"][0]["text"] == (  # type: ignore[index,typeddict-item]
        "You asked about Paris."
    )
    popped = await session.pop_item()
    assert popped is not None
    assert len(await session.get_items()) == 5
    conversation_id = session.session_id
    await session.clear_session()
    with pytest.raises(openai.NotFoundError):
        await live_client.conversations.retrieve(conversation_id)


def _assert_backend_saw_the_whole_exchange_then(backend: FakeBackend, question: str) -> None:
    requests = received(backend)
    assert len(requests) == 3
    roles = [m["role"] for m in requests[2]["messages"]]
    assert roles[-5:] == ["user", "assistant", "tool", "assistant", "user"]
    assert requests[2]["messages"][-1] == {"role": "user", "content": question}


async def test_file_search_tool_streams_citations_over_a_socket(
    scripted: ScriptedModel, backend: FakeBackend, live_url: str, live_client: openai.AsyncOpenAI
) -> None:
    uploaded = await live_client.files.create(
        file=("kettle.md", b"The Zephyr kettle's warranty lasts five years."), purpose="assistants"
    )
    store = await live_client.vector_stores.create(name="manuals")
    await live_client.vector_stores.files.create_and_poll(
        file_id=uploaded.id, vector_store_id=store.id
    )
    scripted.add_turn(tool_call("file_search", {"queries": ["kettle warranty"]}))
    scripted.add_turn(text("The warranty lasts five years [1].", chunk_size=5))
    agent = Agent(
        name="manuals",
        instructions="Answer from the manuals.",
        model=OpenAIResponsesModel(model=backend.model, openai_client=live_client),
        tools=[FileSearchTool(vector_store_ids=[store.id], include_search_results=True)],
    )

    result = Runner.run_streamed(agent, "How long is the kettle warranty?")
    deltas = [
        event.data.delta
        async for event in result.stream_events()
        if event.type == "raw_response_event" and isinstance(event.data, ResponseTextDeltaEvent)
    ]

    assert "".join(deltas) == "The warranty lasts five years [1]."
    assert result.final_output == "The warranty lasts five years [1]."
    calls = [i.raw_item for i in result.new_items if i.type == "tool_call_item"]
    assert calls[0].type == "file_search_call"  # type: ignore[union-attr]
    assert calls[0].results[0].filename == "kettle.md"  # type: ignore[union-attr]
    message = result.raw_responses[-1].output[-1]
    citation = message.content[0].annotations[0]  # type: ignore[union-attr]
    assert (citation.type, citation.file_id) == ("file_citation", uploaded.id)  # type: ignore[union-attr]
