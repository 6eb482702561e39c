"""Background responses through the official client: queued at once, run as durable jobs,
streamed and resumed from any server on the database, cancelled wherever they run."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import asdict
from typing import Any

import httpx2
import openai
import pytest

from agentloom.api.response import Response
from agentloom.config import JobSettings, RetentionSettings, Settings
from agentloom.inference.scripted import ScriptedModel, delay
from agentloom.responses.persist import response_row
from agentloom.services.jobs.retention import RetentionSweep
from agentloom.storage import schema
from agentloom.storage.database import Database
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import BASE_URL, audited_client

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

SETTLED = {"completed", "failed", "incomplete", "cancelled"}


async def settled(client: openai.AsyncOpenAI, response_id: str) -> Any:
    for _ in range(200):
        response = await client.responses.retrieve(response_id)
        if response.status in SETTLED:
            return response
        await asyncio.sleep(0.02)
    raise AssertionError(f"{response_id} is still {response.status}")


def sdk(raw: httpx2.AsyncClient) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=BASE_URL, api_key="unused", http_client=raw, max_retries=0)


@pytest.fixture
async def other(settings: Settings) -> AsyncIterator[openai.AsyncOpenAI]:
    """A second server on the same database (as another process would be)."""
    async with audited_client(settings) as raw:
        yield sdk(raw)


async def test_a_background_response_is_queued_then_runs(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Done in the background.")

    queued = await client.responses.create(model=backend.model, input="Hi", background=True)
    final = await settled(client, queued.id)
    items = await client.responses.input_items.list(queued.id)

    assert (queued.status, queued.background, queued.output) == ("queued", True, [])
    assert (final.status, final.background) == ("completed", True)
    assert final.output_text == "Done in the background."
    assert [item.type for item in items.data] == ["message"]


async def test_background_needs_store(client: openai.AsyncOpenAI, backend: FakeBackend) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        await client.responses.create(model=backend.model, input="Hi", background=True, store=False)

    assert refused.value.param == "background"


async def test_a_bad_background_request_is_refused_before_it_is_queued(
    client: openai.AsyncOpenAI,
) -> None:
    with pytest.raises(openai.NotFoundError):
        await client.responses.create(model="no-such-model", input="Hi", background=True)
    with pytest.raises(openai.NotFoundError):
        await client.responses.create(
            model="no-such-model", input="Hi", background=True, previous_response_id="resp_x"
        )


async def test_streamed_background_events_and_a_resumed_stream(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("one two three")

    stream = await client.responses.create(
        model=backend.model, input="Hi", background=True, stream=True
    )
    events = [event async for event in stream]
    response_id = events[0].response.id  # type: ignore[union-attr]
    resumed = await client.responses.retrieve(response_id, stream=True, starting_after=2)
    again = [event async for event in resumed]

    numbers = [event.sequence_number for event in events]
    assert numbers == list(range(len(events)))
    assert events[-1].type == "response.completed"
    assert [event.sequence_number for event in again] == numbers[3:]
    assert [event.type for event in again] == [event.type for event in events[3:]]


async def test_after_retention_a_replay_gives_the_final_response(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel, settings: Settings
) -> None:
    scripted.add_turn("one two three")
    queued = await client.responses.create(model=backend.model, input="Hi", background=True)
    await settled(client, queued.id)
    database = await Database.connect(settings.database.url, instance_id="inst_sweeper")
    try:  # a sweep two seconds on, events kept for one
        sweep = RetentionSweep(database.retention, RetentionSettings(response_events=1.0))
        swept = await sweep.sweep(time.time() + 2)
    finally:
        await database.aclose()

    replay = [event async for event in await client.responses.retrieve(queued.id, stream=True)]

    assert swept["response_events"].rows > 0
    assert [event.type for event in replay] == ["response.completed"]
    assert replay[0].response.output_text == "one two three"  # type: ignore[union-attr]


async def test_a_stream_resumes_on_another_server_while_the_response_runs(
    client: openai.AsyncOpenAI,
    other: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    scripted.add_turn("slow ", delay(0.4), "answer")

    queued = await client.responses.create(model=backend.model, input="Hi", background=True)
    elsewhere = await other.responses.retrieve(queued.id, stream=True)
    events = [event async for event in elsewhere]

    assert events[0].type == "response.created"
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == "slow answer"  # type: ignore[union-attr]


async def test_cancel_stops_a_running_response_wherever_it_runs(
    client: openai.AsyncOpenAI,
    other: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    scripted.add_turn("start ", delay(30), "never")
    queued = await client.responses.create(model=backend.model, input="Hi", background=True)
    for _ in range(100):  # running
        if (await client.responses.retrieve(queued.id)).status == "in_progress":
            break
        await asyncio.sleep(0.02)

    cancelled = await other.responses.cancel(queued.id)
    again = await client.responses.cancel(queued.id)
    stream = await other.responses.retrieve(queued.id, stream=True)
    replayed = [event.type async for event in stream]

    assert cancelled.status == "cancelled"
    assert again.status == "cancelled"
    assert replayed[0] == "response.created"
    assert "response.completed" not in replayed


async def test_a_queued_response_is_cancelled_before_it_runs(
    client: openai.AsyncOpenAI, settings: Settings, backend: FakeBackend
) -> None:
    queued = await client.responses.create(model=backend.model, input="Hi", background=True)
    cancelled = await client.responses.cancel(queued.id)

    final = await settled(client, queued.id)
    assert cancelled.status in ("cancelled", "completed")  # it may have run already
    assert final.status == cancelled.status


async def test_only_background_responses_are_cancelled_or_streamed_again(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    foreground = await client.responses.create(model=backend.model, input="Hi")

    with pytest.raises(openai.BadRequestError):
        await client.responses.cancel(foreground.id)
    with pytest.raises(openai.BadRequestError):
        await client.responses.retrieve(foreground.id, stream=True)
    with pytest.raises(openai.NotFoundError):
        await client.responses.cancel("resp_missing")


async def test_many_jobs_over_two_servers_run_exactly_once(
    client: openai.AsyncOpenAI,
    other: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    ids = [
        (
            await (client if n % 2 else other).responses.create(
                model=backend.model, input=f"job {n}", background=True
            )
        ).id
        for n in range(16)
    ]

    finals = [await settled(client, response_id) for response_id in ids]

    assert {final.status for final in finals} == {"completed"}
    asked = sorted(str(request.messages[-1].content) for request in scripted.requests)
    assert asked == sorted(f"job {n}" for n in range(16))  # each model call made once


async def test_a_job_whose_process_died_after_a_side_effect_is_failed_not_run_again(
    settings: Settings, client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    response_id = "resp_" + "d" * 48
    row = response_row(
        Response(
            id=response_id,
            created_at=int(time.time()),
            status="in_progress",
            model=backend.model,
            background=True,
        )
    )
    job = {
        "id": "job_dead",
        "kind": "response",
        "subject": response_id,
        "payload": json.dumps({"request": {"model": backend.model, "input": "Hi"}}),
        "status": "running",
        "claimed_by": "inst_gone",
        "lease_until": time.time() - 60,  # its process stopped renewing a minute ago
        "attempts": 1,
        "irreversible": True,  # a code_interpreter or MCP call had started
        "created_at": time.time(),
    }

    def write(conn: Any) -> None:
        conn.execute(schema.responses.insert().values(**asdict(row)))
        conn.execute(schema.jobs.insert().values(**job))

    database = await Database.connect(settings.database.url, instance_id="inst_test")
    try:
        await database.runner.write(write)
    finally:
        await database.aclose()

    final = await settled(client, response_id)

    assert final.status == "failed"
    assert final.error is not None
    assert "side effects" in final.error.message
    assert backend.requests == []  # it was not run again


async def test_a_full_queue_refuses_a_create_with_a_429(
    settings: Settings, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    small = settings.model_copy(update={"jobs": JobSettings(concurrency=1, max_queued=2)})
    scripted.add_turn("slow ", delay(3.0), "answer")
    body = {"model": backend.model, "input": "Hi", "background": True}

    async with audited_client(small) as raw:
        running = (await raw.post("/responses", json=body)).json()["id"]
        await asyncio.sleep(0.3)  # claimed: it runs, it does not wait
        waiting = [(await raw.post("/responses", json=body)).status_code for _ in range(2)]
        refused = await raw.post("/responses", json=body)
        await sdk(raw).responses.cancel(running)

    assert waiting == [200, 200]
    assert refused.status_code == 429
    assert "background queue is full (2 responses waiting)" in refused.json()["error"]["message"]
