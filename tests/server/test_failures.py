"""Upstream failures: the response ends ``failed`` with an OpenAI error code, is stored so, and
nothing hangs.

What is designed (``responses/service.py``, ``server/errors.py``): a streamed response ends with
``response.failed``; a non-streamed one answers the error itself, naming the stored failed
response: 429 ``rate_limit_exceeded`` when the backend rate-limits, 400 ``invalid_prompt`` when it
rejects the request, 400 ``context_length_exceeded`` (param ``input``) when the input does not fit,
502 ``server_error`` when it fails or breaks the stream, 504 ``server_error`` when it times out.
Output streamed before the failure is kept, and the items the failure interrupted are closed
``incomplete``: the stored response is exactly the one ``response.failed`` carried. A non-streamed
response asks the backend for a whole answer, so what the backend made before failing never
arrives: it is stored failed with no output, and a stall is an answer that did not come.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import openai
import pytest
from openai.types.responses import Response

from agentloom.config import Settings
from agentloom.errors import (
    ContextLengthExceededError,
    UpstreamError,
    UpstreamRateLimitError,
    UpstreamRequestError,
)
from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import (
    ScriptedModel,
    TurnPart,
    break_stream,
    delay,
    invalid_chunk,
    raise_error,
    reasoning,
    stall,
    text,
)
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import BASE_URL, make_settings, running

HANG_GUARD = 10.0  # seconds: a test waiting longer than this has hung
TIMEOUT = 0.5  # the provider timeout of the ``slow`` app

ERROR_TYPES = {400: "invalid_request_error", 429: "rate_limit_error", 502: "server_error"}


def overflow() -> TurnPart:
    return raise_error(ContextLengthExceededError("maximum context length is 8 tokens", status=400))


# (id, the model's turn, HTTP status of the non-streamed reply, error code, text streamed first)
FAILURES: list[tuple[str, list[TurnPart], int, str, str | None]] = [
    (
        "HTTP 500",
        [raise_error(UpstreamError("model crashed", status=500))],
        502,
        "server_error",
        None,
    ),
    ("HTTP 503", [raise_error(UpstreamError("overloaded", status=503))], 502, "server_error", None),
    (
        "HTTP 429",
        [raise_error(UpstreamRateLimitError("slow down", status=429))],
        429,
        "rate_limit_exceeded",
        None,
    ),
    (
        "HTTP 400",
        [raise_error(UpstreamRequestError("bad tool schema", status=400))],
        400,
        "invalid_prompt",
        None,
    ),
    ("context length", [overflow()], 400, "context_length_exceeded", None),
    ("broken stream at once", [break_stream()], 502, "server_error", None),
    ("broken stream mid-text", [text("Hel"), break_stream()], 502, "server_error", "Hel"),
    ("invalid chunk at once", [invalid_chunk()], 502, "server_error", None),
    ("invalid chunk mid-text", [text("Hel"), invalid_chunk()], 502, "server_error", "Hel"),
    (
        "error reported mid-stream",
        [text("Hel"), raise_error(UpstreamError("overloaded", status=500))],
        502,
        "server_error",
        "Hel",
    ),
    (
        "rate limit reported mid-stream",
        [text("Hel"), raise_error(UpstreamRateLimitError("slow down", status=429))],
        429,
        "rate_limit_exceeded",
        "Hel",
    ),
]
FAILURE_IDS = [case[0] for case in FAILURES]
FAILURE_CASES = [case[1:] for case in FAILURES]


async def only_stored(http: httpx2.AsyncClient, client: openai.AsyncOpenAI) -> Response:
    """The one stored response (failures leave exactly one row, never an in-progress one)."""
    listed = (await http.get("/responses")).json()["data"]
    assert len(listed) == 1, listed
    return await client.responses.retrieve(listed[0]["id"])


def check_partial_output(response: Response, streamed: str | None) -> None:
    """Output streamed before the failure is kept, closed ``incomplete``; nothing else is."""
    if streamed is None:
        assert response.output == []
        return
    assert len(response.output) == 1
    message: Any = response.output[0]
    assert message.type == "message"
    assert message.status == "incomplete"
    assert [part.text for part in message.content] == [streamed]


async def stream_events(client: openai.AsyncOpenAI, **fields: Any) -> list[Any]:
    async with asyncio.timeout(HANG_GUARD):
        stream = await client.responses.create(stream=True, **fields)
        return [event async for event in stream]


def check_failed_stream(events: list[Any], code: str) -> Response:
    """A well-formed stream that ends ``response.failed`` with ``code``: numbered without gaps,
    every item it opened closed, and the final output as the items' ``done`` events said."""
    types = [event.type for event in events]
    assert types[:2] == ["response.created", "response.in_progress"]
    assert types[-1] == "response.failed"
    assert "response.completed" not in types
    assert "response.incomplete" not in types
    assert [event.sequence_number for event in events] == list(range(len(events)))
    added = [e.output_index for e in events if e.type == "response.output_item.added"]
    done = {e.output_index: e.item for e in events if e.type == "response.output_item.done"}
    assert sorted(done) == added
    final: Response = events[-1].response
    assert final.status == "failed"
    assert final.error is not None
    assert final.error.code == code
    assert final.error.message
    assert final.completed_at is None
    assert [item.model_dump() for item in final.output] == [
        done[i].model_dump() for i in range(len(done))
    ]
    return final


# --- failures of the default app -------------------------------------------------------------


@pytest.mark.parametrize(("turn", "status", "code", "streamed"), FAILURE_CASES, ids=FAILURE_IDS)
async def test_a_failure_answers_the_error_and_is_stored_failed(
    http: httpx2.AsyncClient,
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    turn: list[TurnPart],
    status: int,
    code: str,
    streamed: str | None,
) -> None:
    scripted.add_turn(*turn)

    async with asyncio.timeout(HANG_GUARD):
        reply = await http.post("/responses", json={"model": backend.model, "input": "Hi"})

    assert reply.status_code == status, reply.text
    error = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert (error["type"], error["code"]) == (ERROR_TYPES[status], code)
    stored = await only_stored(http, client)
    assert f"response {stored.id} is stored as failed" in error["message"]
    assert stored.status == "failed"
    assert stored.error is not None
    assert stored.error.code == code
    assert stored.error.message in error["message"]
    assert stored.completed_at is None
    check_partial_output(stored, None)  # asked for whole: nothing came before the failure
    assert len(backend.requests) == 1  # no retry behind the caller's back


@pytest.mark.parametrize(("turn", "status", "code", "streamed"), FAILURE_CASES, ids=FAILURE_IDS)
async def test_a_failure_ends_the_stream_with_response_failed(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    turn: list[TurnPart],
    status: int,
    code: str,
    streamed: str | None,
) -> None:
    scripted.add_turn(*turn)

    events = await stream_events(client, model=backend.model, input="Hi")

    final = check_failed_stream(events, code)
    check_partial_output(final, streamed)
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert deltas == (streamed or "")
    stored = await client.responses.retrieve(final.id)
    assert stored.model_dump() == final.model_dump()


async def test_items_finished_before_the_failure_stay_completed(
    http: httpx2.AsyncClient,
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    scripted.add_turn(reasoning("Thinking it over."), text("Hel"), break_stream())

    events = await stream_events(client, model=backend.model, input="Hi")

    final = check_failed_stream(events, "server_error")
    assert [(item.type, getattr(item, "status", None)) for item in final.output] == [
        ("reasoning", "completed"),  # closed when the text began: it was whole
        ("message", "incomplete"),  # cut off by the failure
    ]
    assert (await only_stored(http, client)).model_dump() == final.model_dump()


async def test_a_failure_after_a_finished_model_call_keeps_its_output(
    http: httpx2.AsyncClient,
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    # tool_choice "required" and an answer without a call: the server asks the model again,
    # and that second call fails.
    scripted.add_turn("I would rather not.")
    scripted.add_turn(raise_error(UpstreamError("model crashed", status=500)))
    tool = {"type": "function", "name": "lookup", "parameters": {"type": "object"}}

    reply = await http.post(
        "/responses",
        json={"model": backend.model, "input": "Hi", "tools": [tool], "tool_choice": "required"},
    )

    assert reply.status_code == 502
    assert reply.json()["error"]["code"] == "server_error"
    assert len(backend.requests) == 2
    stored = await only_stored(http, client)
    assert stored.status == "failed"
    assert [(item.type, getattr(item, "status", None)) for item in stored.output] == [
        ("message", "completed")
    ]
    assert stored.output_text == "I would rather not."


@pytest.mark.parametrize(
    ("error", "exception", "status"),
    [
        (UpstreamError("model crashed", status=500), openai.InternalServerError, 502),
        (UpstreamRateLimitError("slow down", status=429), openai.RateLimitError, 429),
        (UpstreamRequestError("bad tool schema", status=400), openai.BadRequestError, 400),
        (ContextLengthExceededError("too long", status=400), openai.BadRequestError, 400),
    ],
    ids=["500", "429", "400", "context length"],
)
async def test_the_sdk_raises_the_matching_exception(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    error: UpstreamError,
    exception: type[openai.APIStatusError],
    status: int,
) -> None:
    scripted.add_turn(raise_error(error))

    with pytest.raises(openai.APIStatusError) as caught:
        await client.responses.create(model=backend.model, input="Hi")

    assert type(caught.value) is exception
    assert caught.value.status_code == status
    assert caught.value.code == error.code


async def test_a_rate_limit_passes_on_the_backends_retry_after(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(raise_error(UpstreamRateLimitError("slow down", status=429, retry_after=7)))

    with pytest.raises(openai.RateLimitError) as caught:
        await client.responses.create(model=backend.model, input="Hi")

    assert caught.value.response.headers["retry-after"] == "7"


async def test_store_false_failures_store_nothing(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(raise_error(UpstreamError("model crashed", status=500)))

    reply = await http.post(
        "/responses", json={"model": backend.model, "input": "Hi", "store": False}
    )

    assert reply.status_code == 502
    assert reply.json()["error"]["code"] == "server_error"
    assert "stored" not in reply.json()["error"]["message"]
    assert (await http.get("/responses")).json()["data"] == []


async def test_the_server_serves_on_after_a_failure(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(text("Hel"), break_stream())
    scripted.add_turn("Fine now.")
    with pytest.raises(openai.InternalServerError):
        await client.responses.create(model=backend.model, input="Hi")

    response = await client.responses.create(model=backend.model, input="Again")

    assert response.status == "completed"
    assert response.output_text == "Fine now."


# --- timeouts --------------------------------------------------------------------------------


@pytest.fixture
async def slow(backend: FakeBackend, database_url: str) -> AsyncIterator[httpx2.AsyncClient]:
    """A raw client on an app whose provider gives up after ``TIMEOUT`` seconds of silence."""
    settings = make_settings(backend, database_url, timeout=TIMEOUT)
    async with running(create_app(settings)) as app:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url=BASE_URL) as raw:
            yield raw


@pytest.fixture
async def slow_client(slow: httpx2.AsyncClient) -> AsyncIterator[openai.AsyncOpenAI]:
    async with openai.AsyncOpenAI(
        base_url=BASE_URL, api_key="unused", http_client=slow, max_retries=0
    ) as sdk:
        yield sdk


async def backend_hung_up(backend: FakeBackend) -> bool:
    """Whether the backend saw its client go away (the timed-out request was abandoned)."""
    for _ in range(100):
        if backend.disconnects:
            return True
        await asyncio.sleep(0.02)
    return False


# (id, the model's turn, what the error message says, text streamed first)
TIMEOUTS: list[tuple[str, list[TurnPart], str, str | None]] = [
    ("no answer", [delay(5), "too late"], f"did not answer within {TIMEOUT:g}s", None),
    (
        "silent at once",
        [stall(5), "too late"],
        f"stopped streaming for more than {TIMEOUT:g}s",
        None,
    ),
    (
        "silent mid-text",
        [text("Hel"), stall(5), text("lo")],
        f"stopped streaming for more than {TIMEOUT:g}s",
        "Hel",
    ),
]


@pytest.mark.parametrize(
    ("turn", "says", "streamed"), [t[1:] for t in TIMEOUTS], ids=[t[0] for t in TIMEOUTS]
)
async def test_a_timeout_is_a_504_and_stored_failed(
    slow: httpx2.AsyncClient,
    slow_client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    turn: list[TurnPart],
    says: str,
    streamed: str | None,
) -> None:
    """Asked for whole, the answer did not come in time, wherever the backend stalled."""
    scripted.add_turn(*turn)

    started = time.monotonic()
    async with asyncio.timeout(HANG_GUARD):
        reply = await slow.post("/responses", json={"model": backend.model, "input": "Hi"})
    elapsed = time.monotonic() - started

    assert reply.status_code == 504, reply.text
    error = reply.json()["error"]
    assert (error["type"], error["code"]) == ("server_error", "server_error")
    says = f"did not answer within {TIMEOUT:g}s"
    assert says in error["message"]
    assert elapsed < 3  # gave up after the timeout, not after the backend's 5 s
    stored = await only_stored(slow, slow_client)
    assert stored.status == "failed"
    assert stored.error is not None
    assert stored.error.code == "server_error"
    assert re.search(re.escape(says), stored.error.message)
    check_partial_output(stored, None)
    assert await backend_hung_up(backend)


@pytest.mark.parametrize(
    ("turn", "says", "streamed"), [t[1:] for t in TIMEOUTS], ids=[t[0] for t in TIMEOUTS]
)
async def test_a_timeout_ends_the_stream_with_response_failed(
    slow_client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    turn: list[TurnPart],
    says: str,
    streamed: str | None,
) -> None:
    scripted.add_turn(*turn)

    events = await stream_events(slow_client, model=backend.model, input="Hi")

    final = check_failed_stream(events, "server_error")
    assert final.error is not None
    assert says in final.error.message
    check_partial_output(final, streamed)
    assert (await slow_client.responses.retrieve(final.id)).model_dump() == final.model_dump()


async def test_after_a_timeout_the_next_request_is_answered(
    slow_client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(text("Hel"), stall(5), text("lo"))
    scripted.add_turn("On time.")
    with pytest.raises(openai.InternalServerError) as caught:
        await slow_client.responses.create(model=backend.model, input="Hi")
    assert caught.value.status_code == 504

    async with asyncio.timeout(HANG_GUARD):
        response = await slow_client.responses.create(model=backend.model, input="Again")

    assert response.output_text == "On time."


# --- the context window ----------------------------------------------------------------------


def contents(backend: FakeBackend, index: int) -> list[str]:
    messages: Any = backend.requests[index]["messages"]
    return [m["content"] for m in messages]


async def three_turn_chain(client: openai.AsyncOpenAI, backend: FakeBackend) -> str:
    """Turns q1/a1, q2/a2, q3/a3; the id of the last response."""
    previous: str | None = None
    for turn in (1, 2, 3):
        response = await client.responses.create(
            model=backend.model, input=f"q{turn}", previous_response_id=previous
        )
        assert response.output_text == f"a{turn}"
        previous = response.id
    assert previous is not None
    return previous


async def test_context_overflow_with_truncation_disabled_is_the_callers_400(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns("a1", "a2", "a3", [overflow()])
    last = await three_turn_chain(client, backend)

    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model=backend.model, input="q4", previous_response_id=last)

    assert caught.value.code == "context_length_exceeded"
    assert caught.value.param == "input"
    assert caught.value.type == "invalid_request_error"
    assert len(backend.requests) == 4  # no retry: truncation is disabled by default


async def test_truncation_auto_drops_the_oldest_turns_and_retries(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns("a1", "a2", "a3", [overflow()], [overflow()], "a4")
    last = await three_turn_chain(client, backend)

    response = await client.responses.create(
        model=backend.model, input="q4", previous_response_id=last, truncation="auto"
    )

    assert response.status == "completed"
    assert response.truncation == "auto"
    assert response.output_text == "a4"
    assert [contents(backend, i) for i in (3, 4, 5)] == [
        ["q1", "a1", "q2", "a2", "q3", "a3", "q4"],
        ["q2", "a2", "q3", "a3", "q4"],  # the oldest turn dropped
        ["q3", "a3", "q4"],  # and the next one
    ]
    assert (await client.responses.retrieve(response.id)).status == "completed"


async def test_truncation_auto_gives_up_after_its_retries(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    def answer(request: ChatRequest) -> str | list[TurnPart]:
        if request.messages[-1].content == "now":
            return [overflow()]
        return "ok"

    scripted.respond_with(answer)
    previous: str | None = None
    for turn in range(8):
        response = await client.responses.create(
            model=backend.model, input=f"q{turn}", previous_response_id=previous
        )
        previous = response.id
    calls_before = len(backend.requests)

    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model=backend.model, input="now", previous_response_id=previous, truncation="auto"
        )

    assert caught.value.code == "context_length_exceeded"
    sizes = [len(contents(backend, i)) for i in range(calls_before, len(backend.requests))]
    assert sizes == [17, 15, 13, 11, 9]  # the first call, then 4 retries (engine default)


async def test_truncation_auto_with_nothing_left_to_drop_fails(
    http: httpx2.AsyncClient,
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    scripted.add_turn(overflow())

    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model=backend.model, input="huge", truncation="auto")

    assert caught.value.code == "context_length_exceeded"
    assert len(backend.requests) == 1
    stored = await only_stored(http, client)
    assert stored.status == "failed"
    error: Any = stored.to_dict()["error"]  # a code the SDK's Literal does not list
    assert error["code"] == "context_length_exceeded"


async def test_truncation_auto_fits_a_known_context_window_before_calling(
    backend: FakeBackend, database_url: str
) -> None:
    # The backend advertises a 64-token window (max_model_len): the server estimates the input
    # (about 4 characters a token, plus 4 a message) and drops the oldest turns before the call.
    model = ScriptedModel(models=[backend.model], context_window=64)
    backend.reset(model)
    static = make_settings(backend, database_url)
    discovering = static.providers[0].model_copy(update={"models": []})
    settings = Settings(database=static.database, providers=[discovering])
    line = "x" * 56  # 56 characters: 14 + 4 = 18 tokens a message

    async with (
        running(create_app(settings)) as app,
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=BASE_URL) as raw,
        openai.AsyncOpenAI(
            base_url=BASE_URL, api_key="unused", http_client=raw, max_retries=0
        ) as sdk,
    ):
        model.add_turns(f"a1{line}", f"a2{line}", "short", "short")
        first = await sdk.responses.create(model=backend.model, input=f"q1{line}")
        second = await sdk.responses.create(
            model=backend.model, input=f"q2{line}", previous_response_id=first.id
        )
        await sdk.responses.create(
            model=backend.model, input="q3", previous_response_id=second.id, truncation="auto"
        )
        await sdk.responses.create(model=backend.model, input="q3", previous_response_id=second.id)

    fitted, untouched = contents(backend, 2), contents(backend, 3)
    assert fitted == [f"q2{line}", f"a2{line}", "q3"]  # 5 messages did not fit, 3 do
    assert untouched == [f"q1{line}", f"a1{line}", f"q2{line}", f"a2{line}", "q3"]
