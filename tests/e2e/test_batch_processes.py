"""A batch across real ``agentloom serve`` processes on one database: the process running it is
killed (SIGKILL) halfway, the other takes it over; its output has every request once, and only
the requests in flight at the kill ran twice."""

from __future__ import annotations

import io
import json
import signal
import time
from pathlib import Path
from typing import Any

import openai
import pytest

from agentloom.inference.base import ChatRequest
from agentloom.inference.scripted import ScriptedModel, TurnPart, delay
from agentloom.testing.backend import FakeBackend
from tests.e2e.test_restart import WAIT, _env, agentloom_serve

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

REQUESTS = 40
AT_ONCE = 2  # [batches] requests
PACE = {"seconds": 0.2}  # how long the backend takes to answer, set as the test goes


def _slow_echo(request: ChatRequest) -> list[TurnPart]:
    said = request.messages[-1].content
    return [delay(PACE["seconds"]), f"answer to {said}"]


@pytest.fixture
def scripted() -> ScriptedModel:
    PACE["seconds"] = 0.2
    return ScriptedModel(_slow_echo)


def _client(base_url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0, timeout=WAIT)


def _create(client: openai.OpenAI, model: str) -> str:
    lines = [
        {
            "custom_id": f"r{i}",
            "method": "POST",
            "url": "/v1/chat/completions",
            "body": {"model": model, "messages": [{"role": "user", "content": f"line {i}"}]},
        }
        for i in range(REQUESTS)
    ]
    text = "".join(json.dumps(x) + "\n" for x in lines).encode()
    file = client.files.create(file=("in.jsonl", io.BytesIO(text)), purpose="batch")
    batch = client.batches.create(
        input_file_id=file.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    return batch.id


def _wait(client: openai.OpenAI, batch_id: str, done: int) -> Any:
    """The batch once ``done`` requests have ended (or it has)."""
    deadline = time.monotonic() + 6 * WAIT
    while True:
        batch = client.batches.retrieve(batch_id)
        counts = batch.request_counts
        if batch.status in ("completed", "failed", "expired", "cancelled"):
            return batch
        if counts is not None and counts.completed + counts.failed >= done:
            return batch
        assert time.monotonic() < deadline, f"still {batch.status}, {counts}"
        time.sleep(0.05)


def test_a_batch_whose_process_is_killed_loses_and_repeats_nothing(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    env = {
        **_env(database_url, backend),
        "AGENTLOOM_JOBS_LEASE_SECONDS": "2",
        "AGENTLOOM_BATCH_REQUESTS": str(AT_ONCE),
    }

    with agentloom_serve(env, tmp_path / "one.log") as first:
        one = _client(first.base_url)
        batch_id = _create(one, backend.model)
        _wait(one, batch_id, 4)
        PACE["seconds"] = 3.0  # the batch all but waits while the other process starts
        with agentloom_serve(env, tmp_path / "two.log") as second:
            two = _client(second.base_url)
            before = two.batches.retrieve(batch_id)
            first.process.send_signal(signal.SIGKILL)
            first.process.wait(timeout=WAIT)
            PACE["seconds"] = 0.05
            batch = _wait(two, batch_id, REQUESTS + 1)
            content = two.files.content(batch.output_file_id or "").text

    assert before.status == "in_progress", first.output()
    counts = before.request_counts
    assert counts is not None
    assert 4 <= counts.completed < REQUESTS  # killed halfway
    assert batch.status == "completed", second.output()
    assert batch.request_counts is not None
    assert (batch.request_counts.completed, batch.request_counts.total) == (REQUESTS, REQUESTS)
    assert batch.error_file_id is None
    output = [json.loads(x) for x in content.splitlines()]
    assert sorted(o["custom_id"] for o in output) == sorted(f"r{i}" for i in range(REQUESTS))
    for o in output:  # each the answer to its own request
        message = o["response"]["body"]["choices"][0]["message"]["content"]
        assert message == f"answer to line {o['custom_id'][1:]}"
    # the requests sent: each once, and those running at the kill (at most AT_ONCE) once more
    assert REQUESTS <= len(backend.requests) <= REQUESTS + AT_ONCE
