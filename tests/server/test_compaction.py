"""Compaction: ``POST /v1/responses/compact``, ``context_management`` on create, and compaction
items as input. On SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any, cast

import httpx2
import openai
import pytest
from openai.types.responses import CompactedResponse, Response, ResponseInputItemParam

from agentloom.engine.compaction import SUMMARIZER
from agentloom.engine.messages import SUMMARY_HEADING
from agentloom.errors import UpstreamError
from agentloom.inference.scripted import ScriptedModel, raise_error, tool_call, usage
from agentloom.testing.backend import FakeBackend
from tests.server.test_errors import the_error

HISTORY: list[dict[str, Any]] = [
    {"type": "message", "role": "developer", "content": "Be precise."},
    {"type": "message", "role": "user", "content": "What is the weather in Paris?"},
    {
        "type": "function_call",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
    },
    {"type": "function_call_output", "call_id": "call_1", "output": "sunny, 21C"},
    {"type": "message", "role": "assistant", "content": "It is sunny and 21C in Paris."},
]


def wire(items: list[dict[str, Any]]) -> list[ResponseInputItemParam]:
    return cast("list[ResponseInputItemParam]", items)


def messages(backend: FakeBackend, index: int = -1) -> list[dict[str, Any]]:
    return cast("list[dict[str, Any]]", backend.requests[index]["messages"])


def dumped(items: list[Any]) -> list[dict[str, Any]]:
    return [item.model_dump(exclude_none=True, warnings=False) for item in items]


# --- POST /v1/responses/compact ------------------------------------------------------------


async def test_compact_keeps_input_messages_and_adds_a_sealed_summary(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("The user asked about Paris weather: sunny, 21C.", usage(120, 15))

    compacted = await client.responses.compact(model=backend.model, input=wire(HISTORY))

    assert isinstance(compacted, CompactedResponse)
    assert compacted.object == "response.compaction"
    assert compacted.id.startswith("resp_")
    kinds = [(item.type, getattr(item, "role", None)) for item in compacted.output]
    assert kinds == [("message", "developer"), ("message", "user"), ("compaction", None)]
    compaction = compacted.output[-1]
    assert compaction.id.startswith("cmp_")  # type: ignore[union-attr]
    sealed = compaction.encrypted_content  # type: ignore[union-attr]
    assert "Paris" not in sealed  # opaque to the client
    assert (compacted.usage.input_tokens, compacted.usage.output_tokens) == (120, 15)
    # the model summarised a plain transcript of every item
    sent = messages(backend)
    assert sent[0] == {"role": "system", "content": SUMMARIZER}
    transcript = sent[1]["content"]
    for piece in ("DEVELOPER: Be precise.", "TOOL CALL get_weather", "TOOL RESULT (call_1)"):
        assert piece in transcript


async def test_the_compacted_list_continues_the_conversation(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns("Paris: sunny, 21C (from get_weather).", "Take sunglasses.")
    compacted = await client.responses.compact(model=backend.model, input=wire(HISTORY))

    answer = await client.responses.create(
        model=backend.model,
        input=[
            *cast("list[ResponseInputItemParam]", dumped(compacted.output)),
            {"role": "user", "content": "What should I wear?"},
        ],
    )

    assert answer.output_text == "Take sunglasses."
    assert messages(backend) == [
        {"role": "system", "content": "Be precise."},
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "system", "content": SUMMARY_HEADING + "Paris: sunny, 21C (from get_weather)."},
        {"role": "user", "content": "What should I wear?"},
    ]


async def test_compact_a_stored_chain(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns("First answer.", "Summary of the chain.")
    first = await client.responses.create(model=backend.model, input="First question")

    compacted = await client.responses.compact(
        model=backend.model, previous_response_id=first.id, input="Second question"
    )

    kept = [item.content[0].text for item in compacted.output[:-1]]  # type: ignore[union-attr]
    assert kept == ["First question", "Second question"]
    assert "ASSISTANT: First answer." in messages(backend)[1]["content"]


COMPACT_ERRORS: list[tuple[str, dict[str, Any], int, str | None, str | None]] = [
    ("no model", {"input": "hi"}, 400, "model", "missing_required_parameter"),
    ("null model", {"model": None, "input": "hi"}, 400, "model", "invalid_value"),
    ("unknown model", {"model": "nope", "input": "hi"}, 404, "model", "model_not_found"),
    ("nothing to compact", {"model": "fake-model"}, 400, "input", "missing_required_parameter"),
    (
        "unknown previous response",
        {"model": "fake-model", "previous_response_id": "resp_nope"},
        404,
        "previous_response_id",
        "previous_response_not_found",
    ),
]


@pytest.mark.parametrize(
    ("payload", "status", "param", "code"),
    [case[1:] for case in COMPACT_ERRORS],
    ids=[case[0] for case in COMPACT_ERRORS],
)
async def test_compact_errors(
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    payload: dict[str, Any],
    status: int,
    param: str | None,
    code: str | None,
) -> None:
    error = the_error(await http.post("/responses/compact", json=payload), status)

    assert (error["param"], error["code"]) == (param, code)
    assert backend.requests == []


# --- compaction items as input -------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("al1.0000000000000000.AAAA", "a key this server does not have"),
        ("not-sealed", "not sealed here"),
    ],
)
async def test_foreign_compaction_items_are_refused(
    http: httpx2.AsyncClient, backend: FakeBackend, content: str, why: str
) -> None:
    item = {"type": "compaction", "encrypted_content": content}
    reply = await http.post(
        "/responses",
        json={"model": backend.model, "input": [{"role": "user", "content": "hi"}, item]},
    )

    error = the_error(reply, 400)
    assert (error["param"], error["code"]) == (
        "input[1].encrypted_content",
        "invalid_encrypted_content",
    )
    assert backend.requests == []


async def test_a_changed_compaction_item_is_refused(
    client: openai.AsyncOpenAI,
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    scripted.add_turn("summary")
    compacted = await client.responses.compact(model=backend.model, input=wire(HISTORY))
    item = dumped(compacted.output)[-1]
    sealed = item["encrypted_content"]
    item["encrypted_content"] = sealed[:-4] + ("AAAA" if not sealed.endswith("AAAA") else "BBBB")

    reply = await http.post("/responses", json={"model": backend.model, "input": [item]})

    assert the_error(reply, 400)["param"] == "input[0].encrypted_content"


# --- context_management on create ----------------------------------------------------------


async def compacted_on_create(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel, **params: Any
) -> Response:
    """A second turn over the threshold: its summary (50 tokens in, 5 out), then its answer
    (20 in, 3 out)."""
    scripted.add_turn("An earlier, long answer. " * 20)
    first = await client.responses.create(model=backend.model, input="Tell me a long story")
    scripted.add_turns(("Story summary.", usage(50, 5)), ("The end.", usage(20, 3)))
    return await client.responses.create(
        model=backend.model,
        previous_response_id=first.id,
        input="And the end?",
        context_management=[{"type": "compaction", "compact_threshold": 50}],
        **params,
    )


async def test_over_the_threshold_the_history_is_compacted_first(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    second = await compacted_on_create(client, backend, scripted, instructions="Be brief.")

    assert [item.type for item in second.output] == ["compaction", "message"]
    assert second.output_text == "The end."
    summarizer, model_call = received = backend.requests[-2:]
    assert summarizer["messages"][0]["content"] == SUMMARIZER
    assert "Tell me a long story" in summarizer["messages"][1]["content"]
    assert model_call["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "system", "content": SUMMARY_HEADING + "Story summary."},
        {"role": "user", "content": "And the end?"},
    ]
    assert len(received) == 2
    assert second.usage is not None
    assert (second.usage.input_tokens, second.usage.output_tokens) == (70, 8)

    # the next turn reads the summary in place of what it replaced
    scripted.add_turn("ok")
    await client.responses.create(
        model=backend.model, previous_response_id=second.id, input="Thanks"
    )
    assert [m["content"] for m in messages(backend)] == [
        SUMMARY_HEADING + "Story summary.",
        "And the end?",
        "The end.",
        "Thanks",
    ]


async def test_below_the_threshold_nothing_is_compacted(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns("short", "still short")
    first = await client.responses.create(model=backend.model, input="hi")

    second = await client.responses.create(
        model=backend.model,
        previous_response_id=first.id,
        input="again",
        context_management=[{"type": "compaction", "compact_threshold": 10_000}],
    )

    assert [item.type for item in second.output] == ["message"]
    assert len(backend.requests) == 2


async def test_the_current_turn_stays_whole(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    """A function call and its output are never split by compaction: the turn that started
    with the last user message is kept as it was."""
    tools: list[Any] = [{"type": "function", "name": "get_weather"}]
    scripted.add_turn("Some earlier chatter. " * 30)
    first = await client.responses.create(model=backend.model, input="hello", tools=tools)
    scripted.add_turn(tool_call("get_weather", {"city": "Oslo"}, call_id="call_o"))
    second = await client.responses.create(
        model=backend.model, previous_response_id=first.id, input="Oslo weather?", tools=tools
    )
    scripted.add_turns("Chatter summary.", "Cold in Oslo.")

    third = await client.responses.create(
        model=backend.model,
        previous_response_id=second.id,
        input=wire([{"type": "function_call_output", "call_id": "call_o", "output": "-5C"}]),
        tools=tools,
        context_management=[{"type": "compaction", "compact_threshold": 20}],
    )

    assert third.output_text == "Cold in Oslo."
    roles = [m["role"] for m in messages(backend)]
    assert roles == ["system", "user", "assistant", "tool"]
    assert messages(backend)[1]["content"] == "Oslo weather?"


async def test_compaction_is_streamed_before_the_answer(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Long earlier answer. " * 20)
    first = await client.responses.create(model=backend.model, input="start")
    scripted.add_turns("summary", "answer")

    events = []
    async with client.responses.stream(
        model=backend.model,
        previous_response_id=first.id,
        input="next",
        context_management=[{"type": "compaction", "compact_threshold": 30}],
    ) as stream:
        async for event in stream:
            events.append(event)
        final = await stream.get_final_response()

    kinds = [e.type for e in events]
    start = kinds.index("response.compaction.compacting")
    assert kinds[start : start + 3] == [
        "response.compaction.compacting",
        "response.output_item.added",
        "response.output_item.done",
    ]
    compacting = events[start]
    assert compacting.output_index == 0  # type: ignore[union-attr]
    assert compacting.item_id == final.output[0].id  # type: ignore[union-attr]
    assert [item.type for item in final.output] == ["compaction", "message"]


async def test_compaction_in_a_conversation(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    conversation = await client.conversations.create()
    scripted.add_turn("A very long first answer. " * 20)
    await client.responses.create(model=backend.model, conversation=conversation.id, input="one")
    scripted.add_turns("First turn summary.", "second answer", "third answer")

    await client.responses.create(
        model=backend.model,
        conversation=conversation.id,
        input="two",
        context_management=[{"type": "compaction", "compact_threshold": 30}],
    )
    await client.responses.create(model=backend.model, conversation=conversation.id, input="three")

    items = [i async for i in client.conversations.items.list(conversation.id, order="asc")]
    assert [i.type for i in items] == [
        "message",  # one
        "message",  # its answer
        "message",  # two
        "compaction",
        "message",  # second answer
        "message",  # three
        "message",  # third answer
    ]
    assert [m["content"] for m in messages(backend)] == [
        SUMMARY_HEADING + "First turn summary.",
        "two",
        "second answer",
        "three",
    ]


async def test_stateless_replay_with_the_compaction_item(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Long answer. " * 30)
    first = await client.responses.create(model=backend.model, input="q1", store=False)
    history = [
        {"type": "message", "role": "user", "content": "q1", "id": "msg_q1"},
        *dumped(first.output),
        {"type": "message", "role": "user", "content": "q2", "id": "msg_q2"},
    ]
    scripted.add_turns("q1 summary", "a2")
    second = await client.responses.create(
        model=backend.model,
        input=wire(history),
        store=False,
        context_management=[{"type": "compaction", "compact_threshold": 30}],
    )
    scripted.add_turn("a3")

    await client.responses.create(
        model=backend.model,
        input=wire([*history, *dumped(second.output), {"role": "user", "content": "q3"}]),
        store=False,
    )

    assert [m["content"] for m in messages(backend)] == [
        SUMMARY_HEADING + "q1 summary",
        "q2",
        "a2",
        "q3",
    ]


async def test_a_failed_summary_fails_the_response(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Long answer. " * 30)
    first = await client.responses.create(model=backend.model, input="q1")
    scripted.add_turn(raise_error(UpstreamError("summary backend down", status=500)))

    with pytest.raises(openai.APIStatusError) as caught:
        await client.responses.create(
            model=backend.model,
            previous_response_id=first.id,
            input="q2",
            context_management=[{"type": "compaction", "compact_threshold": 30}],
        )

    assert caught.value.status_code == 502


CREATE_ERRORS: list[tuple[str, list[Any], str, str | None]] = [
    (
        "unknown type",
        [{"type": "summarize"}],
        "context_management[0].type",
        "invalid_value",
    ),
    (
        "threshold below one",
        [{"type": "compaction", "compact_threshold": 0}],
        "context_management[0].compact_threshold",
        "invalid_value",
    ),
    (
        "no threshold and an unknown context window",
        [{"type": "compaction"}],
        "context_management[0].compact_threshold",
        "missing_required_parameter",
    ),
]


@pytest.mark.parametrize(
    ("entries", "param", "code"),
    [case[1:] for case in CREATE_ERRORS],
    ids=[case[0] for case in CREATE_ERRORS],
)
async def test_context_management_errors(
    http: httpx2.AsyncClient, backend: FakeBackend, entries: list[Any], param: str, code: str | None
) -> None:
    reply = await http.post(
        "/responses",
        json={"model": backend.model, "input": "hi", "context_management": entries},
    )

    error = the_error(reply, 400)
    assert (error["param"], error["code"]) == (param, code)
    assert backend.requests == []
