"""The server ``Agent`` helper with Llama Stack's agent options, against the agentloom app
(in-process, official ``openai`` client) and the scripted model: documents in the session's
vector store, input and output shields, sampling_params, the builtin tool ids, and a turn's
input_messages / steps / output_message."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from agentloom.agents.event_logger import EventLogger
from agentloom.agents.remote import Agent
from agentloom.agents.session_documents import DocumentError
from agentloom.agents.tools.base import function_tool
from agentloom.agents.turn_steps import (
    CompletionMessage,
    InferenceStep,
    SafetyViolation,
    ShieldCallStep,
    ToolCall,
    ToolExecutionStep,
    ToolResponse,
)
from agentloom.agents.turns import ShieldCalled, TurnCompleted
from agentloom.config import CodeInterpreterSettings, Settings
from agentloom.inference.scripted import ScriptedModel, tool_call
from agentloom.llm.types import Message
from agentloom.safety.settings import BlocklistSettings, RulesShieldSettings, SafetySettings
from agentloom.testing.backend import FakeBackend
from agentloom.testing.serving import serve_async
from tests.plugins.server import make_settings

REFUSAL = "I'm sorry, but I can't help with that."
KETTLE = "The Zephyr kettle boils a litre of water in ninety seconds."


@pytest.fixture
def settings(backend: FakeBackend, database_url: str, tmp_path: Path) -> Settings:
    base = make_settings(backend, database_url, files_directory=tmp_path / "files")
    words = RulesShieldSettings(
        id="words", detectors=[], blocklists=[BlocklistSettings(words=["nightjar"])]
    )
    code = CodeInterpreterSettings(
        directory=tmp_path / "containers", wall_seconds=5, cpu_seconds=5, output_kb=64
    )
    return base.model_copy(
        update={"safety": SafetySettings(shields=[words]), "code_interpreter": code}
    )


@function_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def search(*queries: str) -> Any:
    return tool_call("file_search", {"queries": list(queries)})


def told(backend: FakeBackend, index: int = -1) -> str:
    """What the model was told by the last tool message of request ``index``."""
    messages: list[dict[str, Any]] = backend.requests[index]["messages"]  # type: ignore[assignment]
    return str(next(m for m in reversed(messages) if m["role"] == "tool")["content"])


# --- documents -------------------------------------------------------------------------------


async def test_documents_go_into_the_session_vector_store_and_are_searched(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(search("kettle"))
    scripted.add_turn("Ninety seconds.")
    agent = Agent(client, model=backend.model)
    session = await agent.create_session("kitchen")
    data_url = "data:text/markdown;base64," + base64.b64encode(b"# Toaster\nIt toasts.").decode()

    result = await agent.turn(
        "How fast is the kettle?",
        session,
        documents=[{"content": KETTLE, "mime_type": "text/plain"}, {"content": data_url}],
    )

    store = await agent.session_vector_store(session)
    assert store is not None
    vector_store = await client.vector_stores.retrieve(store)
    assert vector_store.name == "kitchen"
    assert vector_store.file_counts.completed == 2
    conversation = await client.conversations.retrieve(session)
    assert conversation.metadata == {"name": "kitchen", "vector_store_id": store}
    offered = backend.requests[0]["tools"]
    assert [tool["function"]["name"] for tool in offered] == ["file_search"]
    assert "ninety seconds" in told(backend)
    assert result.output_text == "Ninety seconds."
    search_step, execution, answer = result.steps
    assert isinstance(search_step, InferenceStep)
    assert search_step.model_response.tool_calls[0].tool_name == "file_search"
    assert search_step.model_response.stop_reason == "end_of_message"
    assert isinstance(execution, ToolExecutionStep)
    assert execution.hosted
    assert KETTLE in execution.tool_responses[0].content
    assert isinstance(answer, InferenceStep)
    assert answer.model_response == CompletionMessage("Ninety seconds.", "end_of_turn")


async def test_a_later_turn_adds_to_the_same_store(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns("Noted.", "Noted again.")
    agent = Agent(client, model=backend.model)
    session = await agent.create_session()

    await agent.turn("Keep this.", session, documents=[{"content": "alpha"}])
    first = await agent.session_vector_store(session)
    other = Agent(client, model=backend.model)  # another agent finds the session's store
    await other.turn("And this.", session, documents=[{"content": "beta"}])

    assert await other.session_vector_store(session) == first
    assert first is not None
    files = [f async for f in client.vector_stores.files.list(first)]
    assert len(files) == 2
    assert (await client.vector_stores.retrieve(first)).name == session


@pytest.fixture
async def documents_site() -> AsyncIterator[str]:
    """A small web server: ``/code.py``, a 404, and ``/stalls`` that never answers."""

    async def code(request: Request) -> Response:
        return PlainTextResponse("print(sum(range(10)))\n")

    async def stalls(request: Request) -> Response:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    site = Starlette(routes=[Route("/code.py", code), Route("/stalls", stalls)])
    async with serve_async(site, lifespan=False) as base_url:
        yield base_url.removesuffix("/v1")


async def test_a_document_given_by_url_is_fetched(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel, documents_site: str
) -> None:
    scripted.add_turn(search("sum"))
    scripted.add_turn("It prints 45.")
    agent = Agent(client, model=backend.model)
    session = await agent.create_session()

    result = await agent.turn(
        [{"role": "user", "content": "What does it print?"}],
        session,
        documents=[{"content": f"{documents_site}/code.py", "mime_type": "text/plain"}],
    )

    assert "print(sum(range(10)))" in told(backend)
    assert result.output_text == "It prints 45."
    store = await agent.session_vector_store(session)
    assert store is not None
    [attached] = [f async for f in client.vector_stores.files.list(store)]
    assert (await client.files.retrieve(attached.id)).filename == "code.py"


async def test_documents_that_cannot_be_read_are_refused_by_name(
    client: openai.AsyncOpenAI, backend: FakeBackend, documents_site: str
) -> None:
    agent = Agent(client, model=backend.model, document_timeout=0.5)
    session = await agent.create_session()

    with pytest.raises(DocumentError, match=r"documents\[0\].*HTTP 404"):
        await agent.turn("Hi", session, documents=[{"content": f"{documents_site}/missing"}])
    with pytest.raises(DocumentError, match="base64"):
        await agent.turn("Hi", session, documents=[{"content": "data:text/plain;base64,@@"}])
    with pytest.raises(DocumentError, match=r"within 0.5 s"):
        await agent.turn("Hi", session, documents=[{"content": f"{documents_site}/stalls"}])
    assert backend.requests == []


# --- builtin tool ids ------------------------------------------------------------------------


async def test_knowledge_search_searches_named_vector_stores_and_the_session(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    manuals = await client.vector_stores.create(name="my_docs")
    manual = await client.files.create(file=("kettle.txt", KETTLE.encode()), purpose="assistants")
    await client.vector_stores.files.create_and_poll(file_id=manual.id, vector_store_id=manuals.id)
    scripted.add_turn(search("kettle"))
    scripted.add_turn("Ninety seconds.")
    agent = Agent(
        client,
        model=backend.model,
        tools=[
            {
                "name": "builtin::rag/knowledge_search",
                "args": {"vector_db_ids": ["my_docs"], "query_config": {"max_chunks": 3}},
            }
        ],
    )
    session = await agent.create_session()

    result = await agent.turn("How fast?", session, documents=[{"content": "Toasters toast."}])

    store = await agent.session_vector_store(session)
    assert "ninety seconds" in told(backend)
    assert result.response is not None
    [file_search] = [tool for tool in result.response.tools if tool.type == "file_search"]
    assert file_search.vector_store_ids == [manuals.id, store]
    assert file_search.max_num_results == 3


@pytest.mark.parametrize(
    ("tool", "named"),
    [
        ("builtin::wolfram_alpha", "'builtin::wolfram_alpha' is not one agentloom runs"),
        (
            {"name": "builtin::rag", "args": {"query_config": {"chunk_template": "{chunk}"}}},
            "args.query_config.chunk_template is not supported",
        ),
        (
            {"name": "builtin::rag", "args": {"vector_db_ids": "my_docs"}},
            "args.vector_db_ids must be a list",
        ),
        ({"name": "builtin::code_interpreter", "args": {"image": "x"}}, "args.image"),
    ],
)
def test_unknown_tool_ids_and_arguments_are_refused_by_name(tool: Any, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        Agent("http://127.0.0.1:9/v1", model="m", tools=[tool])


async def test_an_unknown_vector_db_is_refused_by_name(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    agent = Agent(
        client,
        model=backend.model,
        tools=[{"name": "builtin::rag", "args": {"vector_db_ids": ["nowhere"]}}],
    )
    session = await agent.create_session()

    with pytest.raises(ValueError, match="no vector store has the id or name 'nowhere'"):
        await agent.turn("Hi", session)


# --- shields ---------------------------------------------------------------------------------


async def test_an_input_shield_stops_the_turn_before_the_model(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    agent = Agent(client, model=backend.model, input_shields=["words"])
    session = await agent.create_session()

    turn = agent.create_turn(
        "Where does the nightjar nest?", session, documents=[{"content": "Nests on the ground."}]
    )
    events = [e async for e in turn]

    assert backend.requests == []
    assert await agent.session_vector_store(session) is None  # documents wait for the shields
    [shield] = [e for e in events if isinstance(e, ShieldCalled)]
    violation = shield.step.violation
    assert violation is not None
    assert violation.user_message == REFUSAL
    assert violation.metadata["shield_id"] == "words"
    assert violation.metadata["violation_type"] == "blocklist"
    result = events[-1]
    assert isinstance(result, TurnCompleted)
    assert result.result.status == "blocked"
    assert result.result.response is None
    assert result.result.output_text == REFUSAL
    assert result.result.output_message == CompletionMessage(REFUSAL, "end_of_turn")
    assert result.result.steps == (shield.step,)
    assert EventLogger().text(events) == f"shield_call> {REFUSAL}\n"
    assert [item async for item in client.conversations.items.list(session)] == []


async def test_output_shields_are_the_servers_guardrails(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns("A robin.", "The nightjar nests on the ground.")
    agent = Agent(client, model=backend.model, input_shields=["words"], output_shields=["words"])
    session = await agent.create_session()

    clean = await agent.turn("Name a bird.", session)
    refused = await agent.turn("Name another.", session)

    assert clean.status == "completed"
    assert [step.step_type for step in clean.steps] == ["shield_call", "inference", "shield_call"]
    assert all(s.violation is None for s in clean.steps if isinstance(s, ShieldCallStep))
    assert refused.status == "blocked"
    assert refused.output_text == REFUSAL
    assert refused.output_message.content == REFUSAL
    last = refused.steps[-1]
    assert isinstance(last, ShieldCallStep)
    assert last.direction == "output"
    assert last.violation == SafetyViolation("error", REFUSAL, {"shield_ids": ["words"]})


async def test_an_unknown_shield_is_the_servers_400(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    agent = Agent(client, model=backend.model, input_shields=["missing"])
    session = await agent.create_session()

    with pytest.raises(openai.BadRequestError, match="missing"):
        await agent.turn("Hi", session)


# --- sampling_params and max_infer_iters -----------------------------------------------------


async def test_sampling_params_reach_the_model(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns("One.", "Two.")
    top_p = Agent(
        client,
        model=backend.model,
        sampling_params={
            "strategy": {"type": "top_p", "temperature": 0.7, "top_p": 0.95},
            "max_tokens": 2048,
            "repetition_penalty": 1.0,
        },
    )
    greedy = Agent(client, model=backend.model, sampling_params={"strategy": {"type": "greedy"}})

    await top_p.turn("Count.", await top_p.create_session())
    await greedy.turn("Count.", await greedy.create_session())

    first, second = backend.requests
    assert (first["temperature"], first["top_p"], first["max_tokens"]) == (0.7, 0.95, 2048)
    assert second["temperature"] == 0
    assert "top_p" not in second


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"strategy": {"type": "top_k", "top_k": 40}}, "top_k sampling"),
        ({"repetition_penalty": 1.2}, "sampling_params.repetition_penalty"),
        ({"stop": ["\n"]}, "sampling_params.stop"),
        ({"max_tokens": 8}, "sampling_params.max_tokens"),
        ({"strategy": {"type": "top_p", "top_p": 1.5}}, "sampling_params.strategy.top_p"),
        ({"strategy": {"type": "beam"}}, "'beam'"),
        ({"temperature": 0.5}, "sampling_params.temperature"),
    ],
)
def test_sampling_params_the_api_cannot_honour_are_refused(params: Any, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        Agent("http://127.0.0.1:9/v1", model="m", sampling_params=params)


async def test_max_infer_iters_caps_the_turn(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("add", {"a": 1, "b": 2}))
    scripted.add_turn(tool_call("add", {"a": 3, "b": 4}))
    agent = Agent(client, model=backend.model, tools=[add], max_infer_iters=2)

    result = await agent.turn("Keep adding.", await agent.create_session())

    assert result.status == "max_rounds"
    assert len(backend.requests) == 2
    with pytest.raises(ValueError, match="max_infer_iters"):
        Agent(client, model=backend.model, max_infer_iters=0)


# --- a turn's steps --------------------------------------------------------------------------


async def test_a_turn_exposes_input_messages_steps_and_output_message(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Adding.", tool_call("add", {"a": 2, "b": 3}, call_id="call_add"))
    scripted.add_turn("2 + 3 = 5.")
    agent = Agent(client, model=backend.model, tools=[add])
    session = await agent.create_session()

    result = await agent.create_turn(
        messages=[{"role": "user", "content": "What is 2 + 3?"}], session_id=session, stream=False
    )

    assert result.input_messages == (Message.user("What is 2 + 3?"),)
    assert result.turn_id.startswith("turn_")
    first, tools, last = result.steps
    call = ToolCall("call_add", "add", json.dumps({"a": 2, "b": 3}))
    assert first == InferenceStep(
        f"{result.turn_id}-step-1",
        result.turn_id,
        result.response_ids[0],
        CompletionMessage("Adding.", "end_of_message", (call,)),
    )
    assert tools == ToolExecutionStep(
        f"{result.turn_id}-step-2",
        result.turn_id,
        (call,),
        (ToolResponse("call_add", "add", "5"),),
        hosted=False,
    )
    assert isinstance(last, InferenceStep)
    assert last.response_id == result.response_ids[1]
    assert result.output_message == CompletionMessage("2 + 3 = 5.", "end_of_turn")


@pytest.mark.usefixtures("requires_sandbox")
async def test_code_interpreter_runs_the_turns_documents(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    script = "print(sum(range(10)))\n"
    scripted.add_turn(
        tool_call("code_interpreter", {"code": "exec(open('/mnt/data/document-1.py').read())"})
    )
    scripted.add_turn("It printed 45.")
    agent = Agent(client, model=backend.model, tools=["builtin::code_interpreter"])
    session = await agent.create_session()

    result = await agent.turn(
        "Run it.", session, documents=[{"content": "data:text/x-python," + quote(script)}]
    )

    assert result.output_text == "It printed 45."
    execution = next(s for s in result.steps if isinstance(s, ToolExecutionStep))
    assert execution.hosted
    assert execution.tool_calls[0].tool_name == "code_interpreter"
    assert execution.tool_responses == (
        ToolResponse(execution.tool_calls[0].call_id, "code_interpreter", "45\n"),
    )
    assert "45" in told(backend)
    note = "The documents of this message are files for code_interpreter: /mnt/data/document-1.py"
    assert backend.requests[0]["messages"][-1] == {"role": "user", "content": note}
