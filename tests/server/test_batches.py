"""The Batch API through the official client: a batch of requests to each endpoint, from an
input file of purpose ``batch`` to output and error files; its input checked line by line;
cancelled, expired, listed; webhooks for its end; a project's batches taking turns."""

from __future__ import annotations

import asyncio
import io
import itertools
import json
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from openai.types import Batch
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

from agentloom.config import BatchSettings, Settings, WebhookSettings
from agentloom.inference.scripted import ScriptedModel, delay
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import FAKE_EMBEDDING_MODEL, make_settings
from tests.plugins.webhooks import WebhookReceiver

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

ENDED = {"completed", "failed", "expired", "cancelled"}


@pytest.fixture
def settings(backend: FakeBackend, database_url: str, tmp_path: Path) -> Settings:
    base = make_settings(backend, database_url, files_directory=tmp_path / "files")
    hooks = WebhookSettings(allow_loopback=True, retry_delays=[0.05], timeout=2.0)
    return base.model_copy(update={"webhooks": hooks})


def line(custom_id: str, url: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"custom_id": custom_id, "method": "POST", "url": url, "body": body}


async def upload(client: openai.AsyncOpenAI, lines: list[Any], purpose: str = "batch") -> str:
    text = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    made = await client.files.create(
        file=("input.jsonl", io.BytesIO(text.encode())),
        purpose=purpose,  # type: ignore[arg-type]
    )
    return made.id


async def batch_of(client: openai.AsyncOpenAI, endpoint: str, lines: list[Any]) -> Batch:
    return await client.batches.create(
        input_file_id=await upload(client, lines),
        endpoint=endpoint,  # type: ignore[arg-type]
        completion_window="24h",
    )


async def ended(client: openai.AsyncOpenAI, batch_id: str, polls: int = 500) -> Batch:
    for _ in range(polls):
        batch = await client.batches.retrieve(batch_id)
        if batch.status in ENDED:
            return batch
        await asyncio.sleep(0.02)
    raise AssertionError(f"{batch_id} is still {batch.status}")


async def reached(client: openai.AsyncOpenAI, batch_id: str, status: str) -> Batch:
    for _ in range(500):
        batch = await client.batches.retrieve(batch_id)
        if batch.status == status:
            return batch
        await asyncio.sleep(0.02)
    raise AssertionError(f"{batch_id} is {batch.status}, not {status}")


async def lines_of(client: openai.AsyncOpenAI, file_id: str | None) -> list[dict[str, Any]]:
    assert file_id is not None
    content = await client.files.content(file_id)
    return [json.loads(x) for x in content.text.splitlines()]


async def test_a_batch_of_responses_ends_with_its_output_and_error_files(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    lines = [
        line("one", "/v1/responses", {"model": backend.model, "input": "first"}),
        line("two", "/v1/responses", {"model": "no-such-model", "input": "second"}),
        line("three", "/v1/responses", {"model": backend.model, "input": "third"}),
    ]
    created = await batch_of(client, "/v1/responses", lines)
    assert created.status == "validating"
    assert (created.completion_window, created.endpoint) == ("24h", "/v1/responses")

    batch = await ended(client, created.id)

    assert batch.status == "completed"
    counts = batch.request_counts
    assert counts is not None
    assert (counts.total, counts.completed, counts.failed) == (3, 2, 1)
    assert batch.model == backend.model
    assert batch.in_progress_at
    assert batch.finalizing_at
    assert batch.completed_at
    output = await lines_of(client, batch.output_file_id)
    assert [o["custom_id"] for o in output] == ["one", "three"]
    answers = [Response.model_validate(o["response"]["body"]) for o in output]
    assert [a.output_text for a in answers] == ["first", "third"]
    assert all(o["response"]["status_code"] == 200 and o["error"] is None for o in output)
    (failed,) = await lines_of(client, batch.error_file_id)
    assert (failed["custom_id"], failed["response"]["status_code"]) == ("two", 404)
    assert "no-such-model" in failed["response"]["body"]["error"]["message"]
    assert batch.usage is not None
    assert batch.usage.input_tokens > 0
    files = {f.id: f for f in (await client.files.list(purpose="batch_output")).data}
    assert set(files) == {batch.output_file_id, batch.error_file_id}


async def logged_rows(client: openai.AsyncOpenAI, batch_id: str, count: int) -> list[Any]:
    """The request log's rows of the batch's requests, once there are ``count`` (the log is
    written a second or so after each request)."""
    params = {"batch_ids[]": batch_id}
    for _ in range(250):
        page: Any = await client.get("/requests", cast_to=object, options={"params": params})
        if len(page["data"]) >= count:
            return list(page["data"])
        await asyncio.sleep(0.02)
    raise AssertionError(f"the log has {len(page['data'])} of {batch_id}'s {count} requests")


async def test_a_batchs_requests_are_logged_one_by_one(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    """Each request of a batch has its row in the request log, as an HTTP request has: under
    its output line's ``request_id``, with the batch's id, its model, tokens, status and error
    code; ``batch_ids[]`` finds them."""
    hello = {"messages": [{"role": "user", "content": "hello"}]}
    lines = [
        line("one", "/v1/chat/completions", {"model": backend.model, **hello}),
        line("two", "/v1/chat/completions", {"model": "no-such-model", **hello}),
    ]
    batch = await ended(client, (await batch_of(client, "/v1/chat/completions", lines)).id)
    answered = [
        *await lines_of(client, batch.output_file_id),
        *await lines_of(client, batch.error_file_id),
    ]
    ids = {o["custom_id"]: o["response"]["request_id"] for o in answered}

    rows = {row["id"]: row for row in await logged_rows(client, batch.id, 2)}
    other: Any = await client.get(
        "/requests", cast_to=object, options={"params": {"batch_ids[]": "batch_other"}}
    )

    assert set(rows) == set(ids.values())
    ok, failed = rows[ids["one"]], rows[ids["two"]]
    assert {ok["batch_id"], failed["batch_id"]} == {batch.id}
    assert (ok["endpoint"], ok["model"], ok["status"], ok["error_code"]) == (
        "chat.completions",
        backend.model,
        200,
        None,
    )
    assert ok["input_tokens"] > 0
    assert ok["output_tokens"] > 0
    assert (failed["model"], failed["status"], failed["error_code"]) == (
        "no-such-model",
        404,
        "model_not_found",
    )
    assert other["data"] == []


@pytest.mark.parametrize(
    ("endpoint", "body", "check"),
    [
        (
            "/v1/chat/completions",
            {"messages": [{"role": "user", "content": "hello"}]},
            lambda b: ChatCompletion.model_validate(b).choices[0].message.content == "hello",
        ),
        ("/v1/completions", {"prompt": "hello"}, lambda b: b["object"] == "text_completion"),
        ("/v1/embeddings", {"input": "hello"}, lambda b: len(b["data"][0]["embedding"]) > 0),
    ],
)
async def test_each_endpoint_runs_in_a_batch(
    client: openai.AsyncOpenAI, backend: FakeBackend, endpoint: str, body: Any, check: Any
) -> None:
    model = FAKE_EMBEDDING_MODEL if endpoint == "/v1/embeddings" else backend.model
    lines = [line(f"r{i}", endpoint, {"model": model, **body}) for i in range(3)]

    batch = await ended(client, (await batch_of(client, endpoint, lines)).id)

    assert batch.status == "completed", batch.errors
    output = await lines_of(client, batch.output_file_id)
    assert sorted(o["custom_id"] for o in output) == ["r0", "r1", "r2"]
    assert all(check(o["response"]["body"]) for o in output)
    assert batch.error_file_id is None


async def test_a_malformed_input_file_fails_the_batch_line_by_line(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    good = {"model": backend.model, "input": "hi"}
    lines = [
        line("a", "/v1/responses", good),
        "not json",
        line("a", "/v1/responses", good),
        line("c", "/v1/chat/completions", good),
        line("d", "/v1/responses", {"input": "no model"}),
        {"custom_id": "e", "method": "POST", "url": "/v1/responses"},
    ]

    batch = await ended(client, (await batch_of(client, "/v1/responses", lines)).id)

    assert batch.status == "failed"
    assert batch.failed_at is not None
    assert batch.errors is not None
    assert batch.errors.data is not None
    found = [(e.line, e.code, e.param) for e in batch.errors.data]
    assert found == [
        (2, "invalid_json_line", None),
        (3, "duplicate_custom_id", "custom_id"),
        (4, "mismatched_endpoint", "url"),
        (5, "missing_model", "body.model"),
        (6, "invalid_request", "body"),
    ]
    assert backend.requests == []  # nothing ran


@pytest.mark.parametrize(
    ("change", "param", "says"),
    [
        ({"completion_window": "48h"}, "completion_window", "must be '24h'"),
        ({"endpoint": "/v1/moderations"}, "endpoint", "does not run"),
        ({"endpoint": "/v1/nothing"}, "endpoint", "is not a batch endpoint"),
        ({"input_file_id": "file-" + "0" * 48}, "input_file_id", "No such File"),
    ],
)
async def test_a_batch_it_cannot_run_is_refused_by_name(
    client: openai.AsyncOpenAI, backend: FakeBackend, change: dict[str, str], param: str, says: str
) -> None:
    lines = [line("a", "/v1/responses", {"model": backend.model, "input": "hi"})]
    asked = {
        "input_file_id": await upload(client, lines),
        "endpoint": "/v1/responses",
        "completion_window": "24h",
        **change,
    }

    with pytest.raises((openai.BadRequestError, openai.NotFoundError)) as refused:
        await client.batches.create(**asked)  # type: ignore[arg-type]

    assert refused.value.body is not None
    error: Any = refused.value.body
    assert (error["param"], says in error["message"]) == (param, True)


async def test_an_input_file_of_another_purpose_is_refused(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    lines = [line("a", "/v1/responses", {"model": backend.model, "input": "hi"})]
    file_id = await upload(client, lines, purpose="user_data")

    with pytest.raises(openai.BadRequestError) as refused:
        await client.batches.create(
            input_file_id=file_id, endpoint="/v1/responses", completion_window="24h"
        )

    assert refused.value.code == "invalid_file_purpose"


async def test_a_cancelled_batch_keeps_what_ended(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("quick")
    for _ in range(7):
        scripted.add_turn("slow", delay(30), "never")
    lines = [
        line(f"r{i}", "/v1/responses", {"model": backend.model, "input": "x"}) for i in range(8)
    ]
    created = await batch_of(client, "/v1/responses", lines)
    for _ in range(500):  # the quick one ended, the slow ones run
        running = await client.batches.retrieve(created.id)
        if running.request_counts and running.request_counts.completed == 1:
            break
        await asyncio.sleep(0.02)

    cancelling = await client.batches.cancel(created.id)
    batch = await ended(client, created.id)

    assert cancelling.status in ("cancelling", "cancelled")
    assert batch.status == "cancelled"
    assert batch.cancelling_at is not None
    assert batch.cancelled_at is not None
    counts = batch.request_counts
    assert counts is not None
    assert (counts.total, counts.completed) == (8, 1)
    assert [o["custom_id"] for o in await lines_of(client, batch.output_file_id)] == ["r0"]
    again = await client.batches.cancel(created.id)
    assert again.status == "cancelled"
    logged = {row["status"] for row in await logged_rows(client, created.id, 2)}
    assert logged == {200, 499}  # the quick one, and those stopped by the cancel


async def test_a_batch_ended_cannot_be_cancelled(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    lines = [line("a", "/v1/responses", {"model": backend.model, "input": "hi"})]
    batch = await ended(client, (await batch_of(client, "/v1/responses", lines)).id)

    with pytest.raises(openai.ConflictError):
        await client.batches.cancel(batch.id)


async def test_batches_are_listed_newest_first_a_page_at_a_time(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    lines = [line("a", "/v1/responses", {"model": backend.model, "input": "hi"})]
    made = [(await batch_of(client, "/v1/responses", lines)).id for _ in range(3)]

    listed = [b.id async for b in client.batches.list(limit=2)]
    page = await client.batches.list(limit=1, after=made[2])

    assert listed == made[::-1]
    assert [b.id for b in page.data] == [made[1]]
    assert page.has_more
    with pytest.raises(openai.NotFoundError):
        await client.batches.list(after="batch_nope")


async def test_a_batch_past_its_window_expires_with_its_unrun_requests(
    backend: FakeBackend, scripted: ScriptedModel, database_url: str, tmp_path: Path
) -> None:
    from tests.plugins.server import audited_client
    from tests.server.test_background import sdk

    scripted.add_turn("quick")
    for _ in range(3):
        scripted.add_turn("slow", delay(30), "never")
    base = make_settings(backend, database_url, files_directory=tmp_path / "files")
    config = base.model_copy(update={"batches": BatchSettings(requests=1, window=2.0)})
    lines = [
        line(f"r{i}", "/v1/responses", {"model": backend.model, "input": "x"}) for i in range(4)
    ]

    async with audited_client(config) as raw:
        client = sdk(raw)
        batch = await ended(client, (await batch_of(client, "/v1/responses", lines)).id)
        output = await lines_of(client, batch.output_file_id)
        errors = await lines_of(client, batch.error_file_id)

    assert batch.status == "expired"
    assert batch.expired_at is not None
    assert [o["custom_id"] for o in output] == ["r0"]
    assert [e["custom_id"] for e in errors] == ["r1", "r2", "r3"]
    assert {e["error"]["code"] for e in errors} == {"batch_expired"}
    assert all(e["response"] is None for e in errors)


async def test_batch_events_are_delivered_signed(
    client: openai.AsyncOpenAI, backend: FakeBackend, receiver: WebhookReceiver
) -> None:
    types = ["batch.completed", "batch.failed", "batch.cancelled", "batch.expired"]
    hook = await client.webhooks.create(name="b", url=receiver.url(), event_types=types)
    good = [line("a", "/v1/responses", {"model": backend.model, "input": "hi"})]
    completed = await ended(client, (await batch_of(client, "/v1/responses", good)).id)
    failed = await ended(client, (await batch_of(client, "/v1/responses", ["{"])).id)

    received = await receiver.wait_for(2)
    events = [
        client.webhooks.unwrap(r.body, r.headers, secret=hook.signing_secret) for r in received
    ]

    assert sorted((e.type, e.data.id) for e in events) == sorted(
        [("batch.completed", completed.id), ("batch.failed", failed.id)]
    )
    sent = await client.get("/webhook_event_types", cast_to=httpx2.Response)
    assert set(types) <= set(sent.json()["data"])


async def test_a_projects_batches_take_turns(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    from tests.plugins.server import audited_client
    from tests.server.test_background import sdk

    base = make_settings(backend, database_url, files_directory=tmp_path / "files")
    config = base.model_copy(update={"batches": BatchSettings(per_project=1)})
    lines = [
        line(f"r{i}", "/v1/responses", {"model": backend.model, "input": "x"}) for i in range(3)
    ]

    async with audited_client(config) as raw:
        client = sdk(raw)
        made = [(await batch_of(client, "/v1/responses", lines)).id for _ in range(3)]
        batches = [await ended(client, batch_id) for batch_id in made]

    assert [b.status for b in batches] == ["completed"] * 3
    spans = sorted((b.in_progress_at or 0, b.completed_at or 0) for b in batches)
    assert all(later[0] >= earlier[1] for earlier, later in itertools.pairwise(spans))
